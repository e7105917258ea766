"""Tile layouts of the values of a TileProgram.

Helion shapes do not say which values are row vectors: `m_i = hl.full([tile_b, tile_m])`
is a vector only because it is combined with `amax(qk, -1)` and carried through the
loop. Layouts are therefore inferred to a fixpoint: reductions over the last axis make
vectors, elementwise results take the layout of an operand of the same shape
(preferring a vector), and a loop-carried value shares one layout across its init, its
iteration argument, its next value and its result.

Values stacked by `gather` carry one partial per block of the split axis; their layout
is that of one partial, and they are marked `gathered`.
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


class LayoutInference:
    def __init__(self, program: TileProgram) -> None:
        self.program = program
        self.layouts: dict[str, ValueLayout] = {}

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
            case Load(result=r) | Matmul(result=r):
                self._set(r, ValueLayout(_index_column(op) or default_layout(r.shape)))
            case Full(result=r):
                self.layouts.setdefault(r.name, ValueLayout(default_layout(r.shape)))
            case Convert(result=r, operand=x):
                self._set(r, self._get(x))
            case Gather(result=r, operand=x):
                self._set(r, replace(self._get(x), gathered=True))
            case ExpandDims(result=r, operand=x, axis=axis):
                src = self._get(x)
                gathered = src.gathered or axis == 0  # axis 0: broadcast over partials
                if axis != 0 and (axis != r.rank - 1 or not src.layout.vector):
                    raise FrontendError(
                        f"{self.program.source_file}:{op.line}: `x[..., None]` must append a "
                        "last axis to a row-reduction result (or a leading axis for a gathered "
                        "merge); other reshapes are not supported."
                    )
                self._set(r, ValueLayout(src.layout, gathered))
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

    def _reduce(self, op: Reduce, result: Value, operand: Value, axis: int) -> None:
        src = self._get(operand)
        if src.gathered and axis == 0:
            self._set(result, ValueLayout(src.layout))
            return
        if axis != operand.rank - 1:
            raise FrontendError(
                f"{self.program.source_file}:{op.line}: Loom reduces over the last axis "
                f"(rows of a tile) only, but this {op.op} reduces axis {axis}; transpose "
                "the operand or reduce over -1."
            )
        lay = src.layout
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


def infer_layouts(program: TileProgram) -> dict[str, ValueLayout]:
    return LayoutInference(program).run()
