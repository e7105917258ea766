"""Tile layouts of the values of a TileProgram.

Helion shapes do not say which values are row vectors: `m_i = hl.full([tile_b, tile_m])`
is a vector only because it is combined with `amax(qk, -1)` and carried through the
loop. Layouts are therefore inferred to a fixpoint: reductions over the last axis make
vectors, elementwise results take the layout of an operand of the same shape
(preferring a vector), and a loop-carried value shares one layout across its init, its
iteration argument, its next value and its result.

Values stacked by `gather` carry one partial per block of the split axis; their layout
is that of one partial, and they are marked `gathered`.

A reduction over the second-last axis (a column reduction, `x[:, tile_n].sum(0)`) makes a
*row*: one tile row with the values in row 0 of each tile, which broadcasts down the rows
of a matrix like a 1-D vector does. A 1-D tensor stored as a column `(n, 1)` (one used as
`s[:, None]`), a window one element wide of a 2-D tensor, or one column of it
(`x[tile_m, 0]`), loads as a row vector.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from loom.errors import FrontendError
from loom.ir.buffers import TileLayout
from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Gather,
    If,
    Load,
    Matmul,
    Op,
    Reduce,
    TileProgram,
    Value,
    walk,
)
from loom.symbolic import Const, Expr, mul


@dataclass(frozen=True)
class ValueLayout:
    layout: TileLayout
    gathered: bool = False


def default_layout(shape: tuple[Expr, ...]) -> TileLayout:
    if len(shape) == 0:
        return TileLayout(Const(1), Const(1), Const(1))
    if len(shape) == 1:
        return TileLayout(Const(1), Const(1), shape[0])
    return TileLayout(mul(1, *shape[:-2]), shape[-2], shape[-1])


def _index_column(op: Load | Matmul) -> TileLayout | None:
    """A tile's indices as a column (`tile.index.unsqueeze(1)`): one value per row, the
    layout of a row reduction."""
    if isinstance(op, Load) and op.tensor.endswith("_col_index"):
        return TileLayout(Const(1), op.result.shape[0], Const(1), True)
    return None


def _one_column(op: Load) -> bool:
    """A 1-D value read from one column of a 2-D tensor (`x[tile_m, 0]`): one value per
    row, in column 0 of its tiles."""
    return len(op.window) == 2 and op.window[1].size == Const(1) != op.window[0].size


class LayoutInference:
    def __init__(self, program: TileProgram) -> None:
        self.program = program
        self.layouts: dict[str, ValueLayout] = {}
        self.splits = any(isinstance(op, Gather) for op in walk(program.body))
        """Whether a leading `[None, ...]` axis broadcasts over gathered partials."""
        self.columns = {a.name for a in program.args if len(a.shape) == 2 and a.shape[1] == 1}

    def run(self) -> dict[str, ValueLayout]:
        for _ in range(8):
            before = dict(self.layouts)
            self._ops(self.program.body)
            if before == self.layouts:
                return self.layouts
        raise FrontendError(
            f"kernel {self.program.name!r}: the tile layouts of its values do not settle "
            "(a value is used both as a row vector and as a matrix); keep reductions and "
            "their results in separate variables."
        )

    def _set(self, value: Value, vl: ValueLayout) -> None:
        self.layouts[value.name] = vl

    def _get(self, value: Value) -> ValueLayout:
        return self.layouts.get(value.name) or ValueLayout(default_layout(value.shape))

    def _ops(self, ops: tuple[Op, ...]) -> None:
        for op in ops:
            self._op(op)

    def _op(self, op: Op) -> None:
        match op:
            case Load():
                self._load(op)
            case Matmul(result=r):
                self._set(r, ValueLayout(default_layout(r.shape)))
            case Full(result=r):
                self.layouts.setdefault(r.name, ValueLayout(default_layout(r.shape)))
            case Convert(result=r, operand=x):
                self._set(r, self._get(x))
            case Gather(result=r, operand=x):
                self._set(r, replace(self._get(x), gathered=True))
            case ExpandDims():
                self._expand(op)
            case Reduce(result=r, operand=x, axis=axis):
                self._reduce(op, r, x, axis)
            case Elementwise(result=r, args=args):
                self._elementwise(r, [a for a in args if isinstance(a, Value)])
            case ForLoop(carried=carried, body=body):
                for c in carried:
                    self._set(c.arg, self._get(c.init))
                self._ops(body)
                for c in carried:
                    vl = self._get(c.next)
                    for v in (c.init, c.arg, c.result):
                        self._set(v, vl)
            case If(body=body):
                self._ops(body)
            case _:
                pass

    def _load(self, op: Load) -> None:
        r = op.result
        lay = default_layout(r.shape)
        index_column = _index_column(op)
        if index_column is not None:
            lay = index_column
        elif r.rank == 1 and (op.tensor in self.columns or _one_column(op)):
            lay = TileLayout(Const(1), r.shape[0], Const(1), True)
        elif r.rank >= 2 and r.shape[-1] == Const(1):  # a (.., n, 1) column: values in column 0
            lay = TileLayout(lay.batch, lay.rows, lay.cols, True)
        self._set(r, ValueLayout(lay))

    def _expand(self, op: ExpandDims) -> None:
        r, x, axis = op.result, op.operand, op.axis
        src = self._get(x)
        over_partials = axis == 0 and self.splits  # broadcast over partials
        gathered = src.gathered or over_partials
        last = axis == r.rank - 1 and src.layout.vector
        lead = axis < r.rank - 2  # a new leading axis of 1: the batch is unchanged
        if not (over_partials or last or lead or (axis == r.rank - 2 and _is_row(src.layout))):
            raise FrontendError(
                f"{self.program.source_file}:{op.line}: `x[..., None]` must append a "
                "last axis to a row vector (a row reduction's result, a 1-D tensor or "
                "`tile.index`), or insert the second-last axis into a row (`v[None, :]`"
                ", a column reduction's result); other reshapes are not supported."
            )
        self._set(r, ValueLayout(src.layout, gathered))

    def _reduce(self, op: Reduce, result: Value, operand: Value, axis: int) -> None:
        src = self._get(operand)
        if src.gathered and axis == 0:
            self._set(result, ValueLayout(src.layout))
            return
        lay = src.layout
        if axis == operand.rank - 2 and not lay.vector and operand.rank in (2, 3):
            row = TileLayout(lay.batch, Const(1), lay.cols)
            self._set(result, ValueLayout(row, src.gathered))
            return
        if axis == operand.rank - 2 and lay.vector:
            raise FrontendError(
                f"{self.program.source_file}:{op.line}: Loom cannot compile this {op.op} of a "
                "column vector (a per-row value such as `v[tile_m][:, None]`) down its rows "
                "to one element; reduce a full slice `x[:, tile_n]`, or broadcast the column "
                "across the columns first."
            )
        if axis != operand.rank - 1:
            raise FrontendError(
                f"{self.program.source_file}:{op.line}: Loom reduces over the last two axes "
                f"of a tile (rows or columns), but this {op.op} reduces axis {axis} of a "
                f"rank-{operand.rank} value; permute on the host so the reduced axis is one "
                "of the last two."
            )
        self._set(
            result, ValueLayout(TileLayout(lay.batch, lay.rows, Const(1), True), src.gathered)
        )

    def _elementwise(self, result: Value, operands: list[Value]) -> None:
        same = [v for v in operands if v.shape == result.shape]
        pool = same or operands
        vectors = [v for v in pool if self._get(v).layout.vector]
        chosen = self._get(vectors[0] if vectors else pool[0])
        gathered = any(self._get(v).gathered for v in operands)
        self._set(result, ValueLayout(chosen.layout, gathered))


def _is_row(layout: TileLayout) -> bool:
    """One element high: a 1-D tile or a column reduction's result."""
    return not layout.vector and layout.rows == Const(1)


def infer_layouts(program: TileProgram) -> dict[str, ValueLayout]:
    return LayoutInference(program).run()
