"""Conditions over integer expressions (comparisons, `and`, `or`) and `select`.

A comparison the symbols' domains decide folds to a constant, junctions flatten, drop
their unit and sort, and a `select` whose condition is decided is its chosen branch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from loom.symbolic.expr import Cond, Expr, ExprLike, Sym, as_expr, cached_property
from loom.symbolic.poly import add, mul

_CMP_OPS: dict[str, Callable[[int, int], bool]] = {
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


@dataclass(frozen=True, eq=False)
class BoolConst(Cond):
    value: bool

    def _render(self) -> str:
        return "true" if self.value else "false"

    def eval(self, env: Mapping[str, int]) -> bool:
        return self.value

    def free_syms(self) -> frozenset[Sym]:
        return frozenset()

    def subs(self, mapping: Mapping[str, ExprLike]) -> Cond:
        return self

    def decided(self) -> bool | None:
        return self.value

    def to_json(self) -> object:
        return self.value


@dataclass(frozen=True, eq=False)
class Cmp(Cond):
    op: str
    lhs: Expr
    rhs: Expr

    def _render(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"

    def eval(self, env: Mapping[str, int]) -> bool:
        return _CMP_OPS[self.op](self.lhs.eval(env), self.rhs.eval(env))

    def free_syms(self) -> frozenset[Sym]:
        return self.lhs.free_syms() | self.rhs.free_syms()

    def subs(self, mapping: Mapping[str, ExprLike]) -> Cond:
        return cmp(self.op, self.lhs.subs(mapping), self.rhs.subs(mapping))

    def decided(self) -> bool | None:
        diff = add(self.lhs, mul(-1, self.rhs))
        lo, hi = diff.bounds
        outcomes = {_CMP_OPS[self.op](v, 0) for v in (lo, hi)}
        if self.op in ("==", "!="):
            if lo == hi:
                return _CMP_OPS[self.op](lo, 0)
            if lo > 0 or hi < 0:
                return self.op == "!="
            return None
        return outcomes.pop() if len(outcomes) == 1 else None

    def to_json(self) -> object:
        return {"cmp": [self.op, self.lhs.to_json(), self.rhs.to_json()]}


def cmp(op: str, a: ExprLike, b: ExprLike) -> Cond:
    if op not in _CMP_OPS:
        raise ValueError(f"unknown comparison {op!r}")
    c = Cmp(op, as_expr(a), as_expr(b))
    decided = c.decided()
    return BoolConst(decided) if decided is not None else c


@dataclass(frozen=True, eq=False)
class _Junction(Cond):
    args: tuple[Cond, ...]
    op_name: ClassVar[str] = ""

    def _render(self) -> str:
        return f"{self.op_name}({', '.join(str(a) for a in self.args)})"

    def free_syms(self) -> frozenset[Sym]:
        return frozenset(itertools.chain.from_iterable(a.free_syms() for a in self.args))

    def to_json(self) -> object:
        return {self.op_name: [a.to_json() for a in self.args]}


@dataclass(frozen=True, eq=False)
class And(_Junction):
    op_name: ClassVar[str] = "and"

    def eval(self, env: Mapping[str, int]) -> bool:
        return all(a.eval(env) for a in self.args)

    def subs(self, mapping: Mapping[str, ExprLike]) -> Cond:
        return conj(*(a.subs(mapping) for a in self.args))


@dataclass(frozen=True, eq=False)
class Or(_Junction):
    op_name: ClassVar[str] = "or"

    def eval(self, env: Mapping[str, int]) -> bool:
        return any(a.eval(env) for a in self.args)

    def subs(self, mapping: Mapping[str, ExprLike]) -> Cond:
        return disj(*(a.subs(mapping) for a in self.args))


def _junction(cls: type[_Junction], args: Iterable[Cond], unit: bool) -> Cond:
    kept: dict[str, Cond] = {}
    for a in args:
        for c in a.args if isinstance(a, cls) else (a,):
            if isinstance(c, BoolConst):
                if c.value != unit:
                    return BoolConst(not unit)
                continue
            kept.setdefault(c.key, c)
    if not kept:
        return BoolConst(unit)
    if len(kept) == 1:
        return next(iter(kept.values()))
    return cls(tuple(kept[k] for k in sorted(kept)))


def conj(*args: Cond) -> Cond:
    return _junction(And, args, unit=True)


def disj(*args: Cond) -> Cond:
    return _junction(Or, args, unit=False)


@dataclass(frozen=True, eq=False)
class Select(Expr):
    cond: Cond
    if_true: Expr
    if_false: Expr
    _rank: ClassVar[int] = 8

    def children(self) -> tuple[Expr, ...]:
        return (self.if_true, self.if_false)

    @cached_property
    def _free_syms(self) -> frozenset[Sym]:
        return self.cond.free_syms().union(*(c.free_syms() for c in self.children()))

    @cached_property
    def _domains(self) -> frozenset[tuple[str, int, int, int]]:
        return frozenset((s.name, s.lower, s.upper, s.align) for s in self.free_syms())

    def _render(self) -> str:
        return f"select({self.cond}, {self.if_true}, {self.if_false})"

    def eval(self, env: Mapping[str, int]) -> int:
        return self.if_true.eval(env) if self.cond.eval(env) else self.if_false.eval(env)

    def subs(self, mapping: Mapping[str, ExprLike]) -> Expr:
        if not (self.free_names() & mapping.keys()):
            return self
        return select(
            self.cond.subs(mapping), self.if_true.subs(mapping), self.if_false.subs(mapping)
        )

    def _bounds(self) -> tuple[int, int]:
        (a, b), (c, d) = self.if_true.bounds, self.if_false.bounds
        return (min(a, c), max(b, d))

    def to_json(self) -> object:
        return {"select": [self.cond.to_json(), self.if_true.to_json(), self.if_false.to_json()]}


def select(cond: Cond, if_true: ExprLike, if_false: ExprLike) -> Expr:
    t, f = as_expr(if_true), as_expr(if_false)
    decided = cond.decided()
    if decided is not None:
        return t if decided else f
    if t == f:
        return t
    return Select(cond, t, f)
