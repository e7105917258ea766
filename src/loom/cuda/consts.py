"""Constant operator and mask tiles: compile-time data a launch reads from DRAM.

A selector or shift tile is a 0/1 matrix, so a tile matmul by it moves elements
exactly (one non-zero product per output element); a mask tile is the guard's
indicator on one tile, and its complement keeps the old value on inactive lanes.
A "stack" is one tile column of a multi-tile operator (a shard row's column shift,
see cuda/rows.py): its i-th tile is the sum of the tiles listed for block row i.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TILE = 32

CONST = "loom_const"
"""The DRAM tensor that holds a launch's constant table."""


@dataclass(frozen=True, slots=True)
class ConstSpec:
    kind: str
    arg: int = 0
    rows: tuple[int, int] = (0, TILE)
    cols: tuple[int, int] = (0, TILE)
    stack: tuple[tuple[ConstSpec, ...], ...] = ()
    """kind "stack": the tiles summed into each block row of a tile column."""

    def block(self) -> np.ndarray:
        """The spec's tile column: one tile, or a stack's (32 * rows) x 32 column."""
        if self.kind == "zero":
            return np.zeros((TILE, TILE))
        if self.kind != "stack":
            return self.tile()
        return np.concatenate(
            [sum((s.tile() for s in part), np.zeros((TILE, TILE))) for part in self.stack]
        )

    def tile(self) -> np.ndarray:
        t = np.zeros((TILE, TILE))
        a = self.arg
        idx = np.arange(TILE)
        match self.kind:
            case "col_select":  # X @ E: every column is column a (only columns in `cols`)
                t[a, self.cols[0] : self.cols[1]] = 1.0
            case "row_select":  # F @ X: every row is row a (only rows in `rows`)
                t[self.rows[0] : self.rows[1], a] = 1.0
            case "hshift_in":  # (X @ S)[i][j] = X[i][j + a]
                src = idx + a
                ok = (src >= 0) & (src < TILE)
                t[src[ok], idx[ok]] = 1.0
            case "hshift_edge":
                src = idx + a - TILE * np.sign(a)
                ok = (src >= 0) & (src < TILE)
                t[src[ok], idx[ok]] = 1.0
            case "vshift_in":  # (S @ X)[i][j] = X[i + a][j]
                src = idx + a
                ok = (src >= 0) & (src < TILE)
                t[idx[ok], src[ok]] = 1.0
            case "vshift_edge":
                src = idx + a - TILE * np.sign(a)
                ok = (src >= 0) & (src < TILE)
                t[idx[ok], src[ok]] = 1.0
            case "hshift_sum" | "vshift_sum":
                one = "hshift_in" if self.kind == "hshift_sum" else "vshift_in"
                for d in range(-TILE + 1, TILE):
                    if a >> (d + TILE) & 1:
                        t += ConstSpec(one, d).tile()
            case "identity":
                t = np.eye(TILE)
            case _ if self.kind.endswith("_t"):  # the transposed operator
                t = ConstSpec(self.kind[:-2], a, self.rows, self.cols).tile().T.copy()
            case "mask" | "nmask":
                t[self.rows[0] : self.rows[1], self.cols[0] : self.cols[1]] = 1.0
                if self.kind == "nmask":
                    t = 1.0 - t
            case _:
                raise ValueError(self.kind)
        return t


def table_rows(specs: tuple[ConstSpec, ...]) -> int:
    """Tile rows of the constant tensor: the tallest stack's."""
    return max((len(s.stack) for s in specs), default=1) or 1


def const_table(specs: tuple[ConstSpec, ...]) -> np.ndarray:
    """The constant tensor of a launch: its tile columns side by side (32h x 32n), a
    one-tile spec in the top row (the rows below it zero)."""
    if not specs:
        return np.zeros((TILE, TILE))
    out = np.zeros((TILE * table_rows(specs), TILE * len(specs)))
    for i, s in enumerate(specs):
        col = s.block()
        out[: col.shape[0], TILE * i : TILE * (i + 1)] = col
    return out
