"""Division-like nodes (`floordiv`, `ceildiv`, `mod`) and their builders.

Divisors are assumed positive; a constant divisor divides an exact polynomial through,
nested constant divisions merge, and a quotient the domains fix folds to a constant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from loom.symbolic.expr import Const, Expr, ExprLike, SymbolicError, as_expr
from loom.symbolic.poly import _const_content, _from_poly, _to_poly


@dataclass(frozen=True, eq=False)
class _Binary(Expr):
    lhs: Expr
    rhs: Expr
    op_name: ClassVar[str] = ""

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)

    def _render(self) -> str:
        return f"{self.op_name}({self.lhs}, {self.rhs})"

    def to_json(self) -> object:
        return {self.op_name: [self.lhs.to_json(), self.rhs.to_json()]}

    def _operands(self, env: Mapping[str, int]) -> tuple[int, int]:
        a, b = self.lhs.eval(env), self.rhs.eval(env)
        if b <= 0:
            raise SymbolicError(f"{self.op_name} by non-positive value {b} in {self}")
        return a, b


@dataclass(frozen=True, eq=False)
class FloorDiv(_Binary):
    op_name: ClassVar[str] = "floordiv"
    _rank: ClassVar[int] = 3

    def eval(self, env: Mapping[str, int]) -> int:
        a, b = self._operands(env)
        return a // b

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return floordiv(*children)

    def _bounds(self) -> tuple[int, int]:
        return _div_bounds(self.lhs.bounds, self.rhs.bounds, lambda a, b: a // b)


@dataclass(frozen=True, eq=False)
class CeilDiv(_Binary):
    op_name: ClassVar[str] = "ceildiv"
    _rank: ClassVar[int] = 4

    def eval(self, env: Mapping[str, int]) -> int:
        a, b = self._operands(env)
        return -(-a // b)

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return ceildiv(*children)

    def _bounds(self) -> tuple[int, int]:
        return _div_bounds(self.lhs.bounds, self.rhs.bounds, lambda a, b: -(-a // b))


@dataclass(frozen=True, eq=False)
class Mod(_Binary):
    op_name: ClassVar[str] = "mod"
    _rank: ClassVar[int] = 5

    def eval(self, env: Mapping[str, int]) -> int:
        a, b = self._operands(env)
        return a % b

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return mod(*children)

    def _bounds(self) -> tuple[int, int]:
        (alo, ahi), (_, bhi) = self.lhs.bounds, self.rhs.bounds
        if alo >= 0 and ahi < self.rhs.bounds[0]:
            return (alo, ahi)
        return (0, max(bhi - 1, 0))


def _div_bounds(
    a: tuple[int, int], b: tuple[int, int], op: Callable[[int, int], int]
) -> tuple[int, int]:
    blo, bhi = max(b[0], 1), max(b[1], 1)
    values = [op(x, y) for x in a for y in (blo, bhi)]
    return (min(values), max(values))


def _positive_const(e: Expr) -> int | None:
    return e.value if isinstance(e, Const) and e.value > 0 else None


def floordiv(a: ExprLike, b: ExprLike) -> Expr:
    lhs, rhs = as_expr(a), as_expr(b)
    c = _positive_const(rhs)
    if isinstance(lhs, Const) and c is not None:
        return Const(lhs.value // c)
    if c == 1 or lhs == Const(0):
        return lhs
    if lhs == rhs:
        return Const(1)
    if c is not None:
        poly = _to_poly(lhs)
        if _const_content(poly) % c == 0:
            return _from_poly({m: v // c for m, v in poly.items()})
        if isinstance(lhs, FloorDiv) and (inner := _positive_const(lhs.rhs)) is not None:
            return floordiv(lhs.lhs, inner * c)
        lo, hi = lhs.bounds
        if lo // c == hi // c:
            return Const(lo // c)
    return FloorDiv(lhs, rhs)


def ceildiv(a: ExprLike, b: ExprLike) -> Expr:
    lhs, rhs = as_expr(a), as_expr(b)
    c = _positive_const(rhs)
    if isinstance(lhs, Const) and c is not None:
        return Const(-(-lhs.value // c))
    if c == 1 or lhs == Const(0):
        return lhs
    if lhs == rhs:
        return Const(1)
    if c is not None:
        poly = _to_poly(lhs)
        if _const_content(poly) % c == 0:
            return _from_poly({m: v // c for m, v in poly.items()})
        if isinstance(lhs, CeilDiv) and (inner := _positive_const(lhs.rhs)) is not None:
            return ceildiv(lhs.lhs, inner * c)
        lo, hi = lhs.bounds
        if -(-lo // c) == -(-hi // c):
            return Const(-(-lo // c))
    return CeilDiv(lhs, rhs)


def mod(a: ExprLike, b: ExprLike) -> Expr:
    lhs, rhs = as_expr(a), as_expr(b)
    c = _positive_const(rhs)
    if isinstance(lhs, Const) and c is not None:
        return Const(lhs.value % c)
    if c == 1 or lhs == rhs or lhs == Const(0):
        return Const(0)
    if c is not None:
        if _const_content(_to_poly(lhs)) % c == 0:
            return Const(0)
        lo, hi = lhs.bounds
        if lo >= 0 and hi < c:
            return lhs
    return Mod(lhs, rhs)
