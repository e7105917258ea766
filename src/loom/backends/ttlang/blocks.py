"""Block expressions of the compute stream as TT-Lang 1.1.6 source text.

TT-Lang's reductions, broadcasts and fills take the result's block shape in tiles, so
every expression is printed together with its (rows, cols) shape. A row vector keeps
its values in column 0 of each tile, which is exactly what `reduce_*(dims=[-1])`
produces and `broadcast(dims=[-1])` expects; a row (1-D tile, column reduction) keeps
them in row 0, as `reduce_*(dims=[-2])` produces and `broadcast(dims=[-2])` expects.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

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

INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
MATH_BINARY = {"maximum": "max", "minimum": "min", "gt": "gt", "lt": "lt"}
MATH_UNARY = {
    "exp": "exp",
    "exp2": "exp2",
    "log": "log",
    "recip": "recip",
    "neg": "neg",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
    "relu": "relu",
    "abs": "abs",
    "silu": "silu",
    "gelu": "gelu",
}
NEG_INF = -3.0e38
"""Finite stand-in for -inf fills (an online max starts there): exp(-3e38 - x) is 0 and
no -inf - -inf = nan can arise, in fp32 and in bf16 alike."""

Shape = tuple[int, int]


def literal(value: float) -> str:
    if math.isinf(value):
        value = NEG_INF if value < 0 else -NEG_INF
    return repr(float(value))


class BlockPrinter:
    """Prints compute expressions; `block` names the held block of a buffer and
    `shape_of` gives a buffer's block shape."""

    def __init__(self, block: Callable[[str], str], shape_of: Mapping[str, Shape]) -> None:
        self.block = block
        self.shape_of = shape_of

    def shape(self, e: CExpr) -> Shape:
        match e:
            case BlockRef(buffer=b):
                return self.shape_of[b]
            case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t, transpose_lhs=tl):
                rows = self.shape(a)[1] if tl else self.shape(a)[0]
                return (rows, self.shape(b)[0] if t else self.shape(b)[1])
            case BinaryExpr(lhs=a):
                return self.shape(a)
            case UnaryExpr(operand=a):
                return self.shape(a)
            case ReduceExpr(operand=a, dim=-2):
                return (1, self.shape(a)[1])
            case ReduceExpr(operand=a):
                return (self.shape(a)[0], 1)
            case BroadcastExpr(operand=a, cols=c, rows=r):
                return (r, c) if r else (self.shape(a)[0], c)
            case FillExpr(rows=r, cols=c):
                return (r, c)
        raise TypeError(type(e).__name__)

    def text(self, e: CExpr) -> str:
        match e:
            case BlockRef(buffer=b):
                return self.block(b)
            case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t, transpose_lhs=tl):
                rhs = f"ttl.block.transpose({self.text(b)})" if t else self._paren(b)
                lhs = f"ttl.block.transpose({self.text(a)})" if tl else self._paren(a)
                return f"{lhs} @ {rhs}"
            case BinaryExpr(op=op, lhs=a, rhs=b) if op in INFIX:
                return f"{self._paren(a)} {INFIX[op]} {self._paren(b)}"
            case BinaryExpr(op=op, lhs=a, rhs=b) if op in MATH_BINARY:
                return f"ttl.math.{MATH_BINARY[op]}({self.text(a)}, {self.text(b)})"
            case UnaryExpr(op=op, operand=a) if op in MATH_UNARY:
                return f"ttl.math.{MATH_UNARY[op]}({self.text(a)})"
            case ReduceExpr(op=op, operand=a, dim=-2):
                cols = self.shape(a)[1]
                return f"ttl.math.reduce_{op}({self.text(a)}, dims=[-2], shape=(1, {cols}))"
            case ReduceExpr(op=op, operand=a):
                rows = self.shape(a)[0]
                return f"ttl.math.reduce_{op}({self.text(a)}, dims=[-1], shape=({rows}, 1))"
            case BroadcastExpr(operand=a, cols=c, rows=r) if r:
                return f"ttl.block.broadcast({self.text(a)}, dims=[-2], shape=({r}, {c}))"
            case BroadcastExpr(operand=a, cols=c):
                rows = self.shape(a)[0]
                return f"ttl.block.broadcast({self.text(a)}, dims=[-1], shape=({rows}, {c}))"
            case FillExpr(value=v, rows=r, cols=c):
                return f"ttl.block.fill({literal(v)}, shape=({r}, {c}))"
        raise TypeError(f"TT-Lang has no form for {e}")

    def _paren(self, e: CExpr) -> str:
        text = self.text(e)
        atomic = isinstance(e, BlockRef) or not isinstance(e, BinaryExpr | MatmulExpr)
        return text if atomic else f"({text})"
