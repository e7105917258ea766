"""DRAM tensors as 2-D tile grids, and the tile window each access touches.

A tensor of shape (*lead, rows, cols) is stored as a grid of 32x32 tiles: the last two
dims are padded to the tile and the leading dims fold into rows, so batch `b` of a
[B, S, D] tensor occupies tile rows [b * ceil(S/32), (b+1) * ceil(S/32)). An access
window maps to one rectangle of that grid when it covers one batch index. Dims indexed
by a grid axis are padded to whole waves first (see `padded_shapes`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from loom.errors import ScheduleError
from loom.ir.geometry import TILE
from loom.ir.program import DramTensor
from loom.ir.tile import ForLoop, If, Load, Op, Store, TensorArg, TileProgram, Window
from loom.symbolic import Const, Expr, floordiv, mod


def dram_tensor(arg: TensorArg, padded: tuple[int, ...]) -> DramTensor:
    if len(arg.shape) < 2:
        raise ScheduleError(f"tensor {arg.name!r} must have at least two dims to be tiled.")
    rows = math.prod(padded[:-2]) * -(-padded[-2] // TILE)
    cols = -(-padded[-1] // TILE)
    extra = padded if padded != tuple(arg.shape) else ()
    return DramTensor(arg.name, tuple(arg.shape), arg.dtype, arg.role, rows, cols, extra)


def padded_shapes(program: TileProgram, maxima: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
    """Every tensor's shape grown to the furthest element any access can reach when each
    grid index takes its largest value (`maxima`: block sizes and index maxima)."""
    shapes = {a.name: list(a.shape) for a in program.args}

    def visit(ops: tuple[Op, ...], env: dict[str, int]) -> None:
        # each access at the largest index of its own loops (two loops over one tile
        # symbol, causal attention's diagonal block and the blocks below it, share the
        # index name but not its range)
        for op in ops:
            if isinstance(op, ForLoop):
                visit(op.body, {**env, op.index.name: op.trip_count.eval(env) - 1})
            elif isinstance(op, If):
                visit(op.body, env)
            elif isinstance(op, Load | Store):
                dims = shapes[op.tensor]
                for d, w in enumerate(op.window):
                    dims[d] = max(dims[d], (w.offset + w.size).eval(env))

    visit(program.body, dict(maxima))
    return {name: tuple(dims) for name, dims in shapes.items()}


def _const(e: Expr, what: str) -> int:
    if not isinstance(e, Const):
        raise ScheduleError(f"{what} ({e}) is not fixed by the schedule's block sizes.")
    return e.value


def _tile_offset(offset: Expr, what: str) -> Expr:
    if mod(offset, TILE) != Const(0):
        raise ScheduleError(
            f"{what} starts at element {offset}, not on a {TILE}-element tile edge: a block "
            f"reads and writes whole {TILE}x{TILE} tiles, so the last two dims of a tensor "
            f"must be indexed by tiles of {TILE} elements or more. A batch tile of block 1 "
            "(a batched grid's `tile_b`) indexing the rows of a 2-D tensor gives one row "
            "per block: write one column per batch entry instead (an `[b, m, 1]` tensor "
            "stored as `t[tile_b, tile_m, :] = v[:, :, None]`), or index a leading dim."
        )
    return floordiv(offset, TILE)


def tile_window(
    arg: DramTensor, window: tuple[Window, ...], env: Mapping[str, Expr], where: str = ""
) -> tuple[Expr, Expr, int, int]:
    """(first row, first col, rows, cols) in tiles of `window` on `arg`'s tile grid;
    `where` names the access in errors (file:line and the op)."""
    where = where or f"the access to {arg.name!r}"
    offsets = [w.offset.subs(env) for w in window]
    sizes = [_const(w.size.subs(env), f"{where}: a window size") for w in window]
    shape = arg.stored_shape
    lead = shape[:-2]
    if any(s != 1 for s in sizes[:-2]):
        raise ScheduleError(
            f"{where} spans {sizes[:-2]} batch entries; Loom lowers batch blocks of 1 "
            "(set the batch tile size to 1)."
        )
    batch: Expr = Const(0)
    for off, extent in zip(offsets[:-2], lead, strict=True):
        batch = batch * extent + off
    rows_per_batch = -(-shape[-2] // TILE)
    row = batch * rows_per_batch + _tile_offset(offsets[-2], where)
    col = _tile_offset(offsets[-1], where)
    return row, col, -(-sizes[-2] // TILE), -(-sizes[-1] // TILE)
