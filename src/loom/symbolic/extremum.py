"""`min` and `max`: flattened, deduplicated, and pruned of arguments that never win.

An argument is dropped when the symbols' domains prove another at least as extreme
(from the intervals, or from the bounds of their difference, where shared terms cancel).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from loom.symbolic.expr import Const, Expr, ExprLike, as_expr
from loom.symbolic.poly import _atom_order, _memo, _memoised, add, mul


@dataclass(frozen=True, eq=False)
class _Extremum(Expr):
    args: tuple[Expr, ...]
    op_name: ClassVar[str] = ""

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def _render(self) -> str:
        return f"{self.op_name}({', '.join(str(a) for a in self.args)})"

    def to_json(self) -> object:
        return {self.op_name: [a.to_json() for a in self.args]}


@dataclass(frozen=True, eq=False)
class Min(_Extremum):
    op_name: ClassVar[str] = "min"
    _rank: ClassVar[int] = 6

    def eval(self, env: Mapping[str, int]) -> int:
        return min(a.eval(env) for a in self.args)

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return minimum(*children)

    def _bounds(self) -> tuple[int, int]:
        return (min(a.bounds[0] for a in self.args), min(a.bounds[1] for a in self.args))


@dataclass(frozen=True, eq=False)
class Max(_Extremum):
    op_name: ClassVar[str] = "max"
    _rank: ClassVar[int] = 7

    def eval(self, env: Mapping[str, int]) -> int:
        return max(a.eval(env) for a in self.args)

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return maximum(*children)

    def _bounds(self) -> tuple[int, int]:
        return (max(a.bounds[0] for a in self.args), max(a.bounds[1] for a in self.args))


def _extremum(cls: type[_Extremum], args: Iterable[ExprLike], is_min: bool) -> Expr:
    flat: list[Expr] = []
    for arg in args:
        e = as_expr(arg)
        flat.extend(e.args if isinstance(e, cls) else (e,))
    consts = [e.value for e in flat if isinstance(e, Const)]
    others = {e.key: e for e in flat if not isinstance(e, Const)}
    items = list(others.values())
    if consts:
        items.append(Const(min(consts) if is_min else max(consts)))
    if not items:
        raise ValueError(f"{cls.op_name} needs at least one argument")
    kept = [e for e in items if not any(_never_wins(e, o, is_min) for o in items if o is not e)]
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=_atom_order)
    return cls(tuple(kept))


def _never_wins(e: Expr, other: Expr, is_min: bool) -> bool:
    """`e` can be dropped: `other` is always at least as extreme (ties keep one)."""
    return _beats(other, e, is_min) and not (_beats(e, other, is_min) and e.key < other.key)


def _beats(a: Expr, b: Expr, is_min: bool) -> bool:
    """`a` is always at least as extreme as `b`."""
    if (a.bounds[1] <= b.bounds[0]) if is_min else (a.bounds[0] >= b.bounds[1]):
        return True
    if not (a.free_names() & b.free_names()) or len(a.key) + len(b.key) > 120:
        return False  # the intervals are independent, or the difference is too costly
    key = ("beats", a.ident, b.ident, is_min)
    hit = _memo.get(key)
    if hit is None:
        lo, hi = add(a, mul(-1, b)).bounds  # a - b cancels shared terms
        hit = _memo[key] = hi <= 0 if is_min else lo >= 0
    return bool(hit)


@functools.partial(_memoised, "min")
def minimum(*args: ExprLike) -> Expr:
    return _extremum(Min, args, is_min=True)


@functools.partial(_memoised, "max")
def maximum(*args: ExprLike) -> Expr:
    return _extremum(Max, args, is_min=False)
