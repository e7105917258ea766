"""Block-level compute expressions from the tile program's ops.

A value with a buffer the compute engine reads becomes a `BlockRef`; an inlined value is
rebuilt from its defining op inside its consumer's expression. Every expression comes
with the *keys* it reads: the names of the buffered value instances whose blocks must be
held (waited) while it is evaluated. Row vectors broadcast across the columns of a
matrix operand; scalar operands become constant fills of the result's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from loom.errors import ScheduleError
from loom.ir.integers import converts_by_product
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    BroadcastExpr,
    CExpr,
    FillExpr,
    MatmulExpr,
    ReduceExpr,
    UnaryExpr,
)
from loom.ir.tile import (
    ELEMENTWISE_OPS,
    Convert,
    Elementwise,
    ExpandDims,
    Full,
    Matmul,
    Reduce,
    Value,
)
from loom.lower.context import LowerContext
from loom.symbolic import Const

FOLD_OPS = {"max": "maximum", "sum": "add"}
"""Binary op that folds one more partial into a reduction over the gathered axis."""


@dataclass(frozen=True)
class Built:
    expr: CExpr
    reads: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class ExprBuilder:
    ctx: LowerContext
    bindings: Mapping[str, Built] = field(default_factory=dict)
    """Values standing for something else in this instance (the owner's own partial)."""

    def value(self, name: str) -> Built:
        root = self.ctx.root(name)
        if root in self.bindings:
            return self.bindings[root]
        cb = self.ctx.read_cb(root)
        if cb is not None:
            return Built(BlockRef(cb), frozenset((root,)))
        return self.op_expr(root)

    def op_expr(self, name: str) -> Built:
        """Rebuild `name` from its defining op (an inlined value)."""
        op = self.ctx.defs.get(name)
        match op:
            case Elementwise():
                return self._elementwise(op)
            case Reduce(axis=axis, operand=x) if axis == x.rank - 1:
                inner = self.value(x.name)
                return Built(ReduceExpr(op.op, inner.expr), inner.reads)
            case Reduce(axis=axis, operand=x) if axis == x.rank - 2:
                inner = self.value(x.name)  # a column reduction (folds never get here)
                return Built(ReduceExpr(op.op, inner.expr, dim=-2), inner.reads)
            case Matmul():
                return self._matmul(op)
            case Convert(result=r, operand=x) if converts_by_product(x.dtype, r.dtype):
                return self._int_to_float(name, x)
            case Convert(operand=x) | ExpandDims(operand=x):
                return self.value(x.name)
            case Full(fill=fill):
                rows, cols = self.ctx.value_tiles(name)
                return Built(FillExpr(fill, rows, cols))
        raise ScheduleError(
            f"value {name!r} has no buffer and cannot be computed inline "
            f"({type(op).__name__ if op else 'undefined'})."
        )

    def _int_to_float(self, name: str, x: Value) -> Built:
        """An int32 tile made float, as a product with ones (loom.ir.integers; a matmul
        multiplies like-typed blocks only, so the conversion cannot be left implicit)."""
        rows, cols = self.ctx.value_tiles(name)
        inner = self.value(x.name)
        return Built(BinaryExpr("mul", inner.expr, FillExpr(1.0, rows, cols)), inner.reads)

    def operand(self, arg: Value | float, result: str) -> Built:
        """`arg` shaped like `result`: row vectors broadcast, scalars fill."""
        rows, cols = self.ctx.value_tiles(result)
        if not isinstance(arg, Value):
            return Built(FillExpr(float(arg), rows, cols))
        built = self.value(arg.name)
        if self.ctx.is_vector(arg.name) and not self.ctx.is_vector(result):
            return Built(BroadcastExpr(built.expr, cols), built.reads)
        if self._is_row(arg.name) and not self._is_row(result):
            return Built(BroadcastExpr(built.expr, cols, rows), built.reads)
        return built

    def _is_row(self, name: str) -> bool:
        """A one-element-high value (a 1-D tile) that broadcasts down a matrix's rows."""
        layout = self.ctx.buffered.layouts[name]
        return not layout.vector and layout.rows == Const(1) and layout.batch == Const(1)

    def _elementwise(self, op: Elementwise) -> Built:
        name = op.result.name
        args = [self.operand(a, name) for a in op.args]
        reads = frozenset().union(*(a.reads for a in args))
        if ELEMENTWISE_OPS.get(op.op) == 1:
            return Built(UnaryExpr(op.op, args[0].expr), reads)
        if ELEMENTWISE_OPS.get(op.op) == 2:
            return Built(BinaryExpr(op.op, args[0].expr, args[1].expr), reads)
        raise ScheduleError(f"elementwise op {op.op!r} is not supported by the lowering.")

    def _matmul(self, op: Matmul) -> Built:
        for v in op.operands():
            batch = self.ctx.buffered.layouts[v.name].batch
            if batch.subs(self.ctx.env) != Const(1):
                raise ScheduleError(
                    f"matmul operand {v.name!r} holds a batch of {batch} blocks; Loom "
                    "lowers a batch tile size of 1 only."
                )
        lhs, rhs = self.value(op.lhs.name), self.value(op.rhs.name)
        expr: CExpr = MatmulExpr(lhs.expr, rhs.expr, op.rhs_transposed, op.lhs_transposed)
        reads = lhs.reads | rhs.reads
        if op.acc is not None:
            acc = self.value(op.acc.name)
            expr, reads = BinaryExpr("add", acc.expr, expr), reads | acc.reads
        return Built(expr, reads)

    def fold(self, op: Reduce, acc: Built | None) -> Built:
        """One step of a reduction over gathered partials (or its first partial)."""
        part = self.value(op.operand.name)
        if acc is None:
            return part
        return Built(BinaryExpr(FOLD_OPS[op.op], acc.expr, part.expr), acc.reads | part.reads)
