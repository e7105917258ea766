"""Integer expressions over named symbols, canonicalised when built.

Every arithmetic operation normalises its result, so structurally equal values compare
equal and print identically:

* sums and products are kept as a polynomial (a sorted tuple of monomials with integer
  coefficients) over *atoms*: symbols and the non-polynomial nodes
  (``floordiv``, ``ceildiv``, ``mod``, ``min``, ``max``, ``select``);
* constants fold, nested ``min``/``max`` flatten, divisions by 1 vanish, exact
  divisions of polynomials by constants divide through;
* rules that need a symbol's range (``min(tile_m, 4096) -> tile_m`` when
  ``tile_m <= 4096``) use the domain carried by :class:`Sym`.

Divisors are assumed positive (tile sizes, trip counts); :meth:`Expr.eval` raises on a
non-positive divisor rather than guessing a convention.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, Union, overload

ExprLike = Union["Expr", int]

_T = TypeVar("_T")


class cached_property(Generic[_T]):
    """`functools.cached_property` without its lock (Python 3.11 takes one lock shared by
    every instance on each first access): expressions are built by the millions and never
    shared between threads while they are built. The value lands in the instance's
    `__dict__` (past a frozen dataclass's `__setattr__`), where later reads find it
    without calling the descriptor."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> cached_property[_T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object, owner: type | None = None) -> _T | cached_property[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


class SymbolicError(ValueError):
    """An expression cannot be evaluated (unbound symbol, bad divisor)."""


@dataclass(frozen=True, eq=False)
class Expr:
    """Base class of all integer expressions."""

    _rank: ClassVar[int] = 0

    # ----- operators -------------------------------------------------------------------
    def __add__(self, other: ExprLike) -> Expr:
        return add(self, other)

    def __radd__(self, other: ExprLike) -> Expr:
        return add(other, self)

    def __sub__(self, other: ExprLike) -> Expr:
        return add(self, mul(-1, other))

    def __rsub__(self, other: ExprLike) -> Expr:
        return add(other, mul(-1, self))

    def __mul__(self, other: ExprLike) -> Expr:
        return mul(self, other)

    def __rmul__(self, other: ExprLike) -> Expr:
        return mul(other, self)

    def __neg__(self) -> Expr:
        return mul(-1, self)

    def __floordiv__(self, other: ExprLike) -> Expr:
        return floordiv(self, other)

    def __rfloordiv__(self, other: ExprLike) -> Expr:
        return floordiv(other, self)

    def __mod__(self, other: ExprLike) -> Expr:
        return mod(self, other)

    # ----- comparisons build conditions (equality stays structural) ---------------------
    def le(self, other: ExprLike) -> Cond:
        return cmp("<=", self, other)

    def lt(self, other: ExprLike) -> Cond:
        return cmp("<", self, other)

    def ge(self, other: ExprLike) -> Cond:
        return cmp(">=", self, other)

    def gt(self, other: ExprLike) -> Cond:
        return cmp(">", self, other)

    def eq(self, other: ExprLike) -> Cond:
        return cmp("==", self, other)

    def ne(self, other: ExprLike) -> Cond:
        return cmp("!=", self, other)

    # ----- identity: the canonical text (cached), so deep trees compare and hash fast --
    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Expr) and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash(self.key)

    # ----- queries ---------------------------------------------------------------------
    def children(self) -> tuple[Expr, ...]:
        return ()

    @cached_property
    def key(self) -> str:
        """Canonical text: equal for equal expressions (symbols are equal by name)."""
        return self._render()

    def __str__(self) -> str:
        # cached: a parent's text embeds its children's, so deep trees render once each
        return self.key

    def _render(self) -> str:
        raise NotImplementedError

    def free_syms(self) -> frozenset[Sym]:
        return self._free_syms

    @cached_property
    def _free_syms(self) -> frozenset[Sym]:
        # set unions reuse the stored hashes: no Sym.__hash__ call per repeated atom
        return _union([c.free_syms() for c in self.children()], _EMPTY_SYMS)

    def free_names(self) -> frozenset[str]:
        return self._free_names

    @cached_property
    def _free_names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.free_syms())

    @cached_property
    def ident(self) -> tuple[str, frozenset[tuple[str, int, int, int]]]:
        """The key and the domains of its symbols: what every canonicalisation rule
        reads (the key alone names symbols, not their ranges), so equal idents build
        equal results and the builders below can memoise on it."""
        return self.key, self._domains

    @cached_property
    def _domains(self) -> frozenset[tuple[str, int, int, int]]:
        return _union([c._domains for c in self.children()], _EMPTY_DOMAINS)

    @property
    def is_const(self) -> bool:
        return isinstance(self, Const)

    def eval(self, env: Mapping[str, int]) -> int:
        raise NotImplementedError

    def subs(self, mapping: Mapping[str, ExprLike]) -> Expr:
        """Replace symbols by name and re-canonicalise."""
        if not mapping or not (self.free_names() & mapping.keys()):
            return self
        return self._rebuild(tuple(c.subs(mapping) for c in self.children()))

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        raise NotImplementedError

    @cached_property
    def bounds(self) -> tuple[int, int]:
        """Inclusive interval containing every value, from the symbols' domains."""
        return self._bounds()

    def _bounds(self) -> tuple[int, int]:
        raise NotImplementedError

    def to_json(self) -> object:
        raise NotImplementedError


_EMPTY_SYMS: frozenset[Sym] = frozenset()
_EMPTY_DOMAINS: frozenset[tuple[str, int, int, int]] = frozenset()


def _union(sets: list[frozenset[_T]], empty: frozenset[_T]) -> frozenset[_T]:
    """The union of the children's sets, reusing the largest when it holds the others:
    a parent usually has the symbols of one child, and copying them at every level of a
    deep tree made these unions a seventh of building a problem."""
    if not sets:
        return empty
    big = max(sets, key=len)
    if all(s is big or s <= big for s in sets):
        return big
    return big.union(*sets)


def as_expr(value: ExprLike) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int or Expr, got {type(value).__name__}")
    return Const(value)


@dataclass(frozen=True, eq=False)
class Const(Expr):
    value: int
    _rank: ClassVar[int] = 0

    def _render(self) -> str:
        return str(self.value)

    def eval(self, env: Mapping[str, int]) -> int:
        return self.value

    def _rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return self

    def _bounds(self) -> tuple[int, int]:
        return (self.value, self.value)

    def to_json(self) -> object:
        return self.value


@dataclass(frozen=True, eq=False)
class Sym(Expr):
    """A compile-time unknown with a source-level name and a finite domain.

    The value lies in ``[lower, upper]`` and is a multiple of ``align``. ``kind`` says
    where the symbol comes from (``tile`` for a Helion block size, ``index`` for a loop
    induction variable, ``knob`` for a pipelining choice, ``mesh`` for a core factor).
    """

    name: str
    lower: int
    upper: int
    align: int = 1
    kind: str = "tile"
    _rank: ClassVar[int] = 1

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"symbol name {self.name!r} is not an identifier")
        if self.lower > self.upper:
            raise ValueError(f"symbol {self.name}: empty domain [{self.lower}, {self.upper}]")
        if self.align < 1:
            raise ValueError(f"symbol {self.name}: alignment must be >= 1")

    def _render(self) -> str:
        return self.name

    @cached_property
    def _domains(self) -> frozenset[tuple[str, int, int, int]]:
        return frozenset(((self.name, self.lower, self.upper, self.align),))

    def free_syms(self) -> frozenset[Sym]:
        return frozenset((self,))

    def free_names(self) -> frozenset[str]:
        return frozenset((self.name,))

    def eval(self, env: Mapping[str, int]) -> int:
        try:
            return env[self.name]
        except KeyError:
            raise SymbolicError(f"symbol {self.name} has no value") from None

    def subs(self, mapping: Mapping[str, ExprLike]) -> Expr:
        if self.name in mapping:
            return as_expr(mapping[self.name])
        return self

    def _bounds(self) -> tuple[int, int]:
        lo = -(-self.lower // self.align) * self.align
        hi = (self.upper // self.align) * self.align
        return (lo, hi) if lo <= hi else (self.lower, self.upper)

    def domain(self) -> range:
        lo, hi = self.bounds
        return range(lo, hi + 1, self.align)

    def to_json(self) -> object:
        return {"sym": self.name}


Monomial = tuple[Expr, ...]  # sorted atoms, repeated for powers


@dataclass(frozen=True, eq=False)
class Poly(Expr):
    """Sum of ``coeff * product(atoms)``; the empty monomial is the constant term."""

    terms: tuple[tuple[Monomial, int], ...]
    _rank: ClassVar[int] = 2

    def children(self) -> tuple[Expr, ...]:
        return self._atoms

    @cached_property
    def _atoms(self) -> tuple[Expr, ...]:
        """Distinct atoms, first occurrence first (a power repeats its atom)."""
        return tuple(dict.fromkeys(a for mono, _ in self.terms for a in mono))

    def _render(self) -> str:
        parts: list[str] = []
        for mono, coeff in self.terms:
            parts.append(_format_term(mono, coeff, first=not parts))
        return "".join(parts)

    def eval(self, env: Mapping[str, int]) -> int:
        total = 0
        for mono, coeff in self.terms:
            value = coeff
            for atom in mono:
                value *= atom.eval(env)
            total += value
        return total

    def subs(self, mapping: Mapping[str, ExprLike]) -> Expr:
        if not (self.free_names() & mapping.keys()):
            return self
        return add(
            *(mul(coeff, *(atom.subs(mapping) for atom in mono)) for mono, coeff in self.terms)
        )

    def _bounds(self) -> tuple[int, int]:
        lo = hi = 0
        for mono, coeff in self.terms:
            t_lo, t_hi = coeff, coeff
            for atom in mono:
                t_lo, t_hi = _interval_mul((t_lo, t_hi), atom.bounds)
            lo, hi = lo + min(t_lo, t_hi), hi + max(t_lo, t_hi)
        return (lo, hi)

    def to_json(self) -> object:
        return {"poly": [[coeff, [a.to_json() for a in mono]] for mono, coeff in self.terms]}


def _format_term(mono: Monomial, coeff: int, first: bool) -> str:
    sign = "-" if coeff < 0 else ("" if first else "+")
    magnitude = abs(coeff)
    factors = [_paren(a) for a in mono]
    if magnitude != 1 or not factors:
        factors.insert(0, str(magnitude))
    body = "*".join(factors)
    if first:
        return f"{sign}{body}"
    return f" {sign} {body}"


def _paren(atom: Expr) -> str:
    return f"({atom})" if isinstance(atom, Poly) else str(atom)


def _interval_mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    corners = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return (min(corners), max(corners))


# ----- polynomial arithmetic ---------------------------------------------------------


def _to_poly(e: Expr) -> dict[Monomial, int]:
    if isinstance(e, Const):
        return {(): e.value} if e.value else {}
    if isinstance(e, Poly):
        return dict(e.terms)
    return {(e,): 1}


def _atom_order(a: Expr) -> tuple[int, str]:
    return (a._rank, a.key)


def _from_poly(poly: Mapping[Monomial, int]) -> Expr:
    items = [(m, c) for m, c in poly.items() if c != 0]
    if not items:
        return Const(0)
    if len(items) == 1:
        mono, coeff = items[0]
        if not mono:
            return Const(coeff)
        if coeff == 1 and len(mono) == 1:
            return mono[0]
    # non-constant monomials by degree then text; the constant last
    items.sort(key=lambda mc: (len(mc[0]) == 0, -len(mc[0]), [_atom_order(a) for a in mc[0]]))
    return Poly(tuple(items))


MEMO_LIMIT = 200_000
"""Entries of the builders' memo before it is emptied (the model builds the same
sub-expressions for many candidates: the tile counts, per-tile costs and their maxima)."""

_memo: dict[tuple[object, ...], object] = {}


def _memoised(tag: str, build: Callable[..., Expr]) -> Callable[..., Expr]:
    def memoised(*args: ExprLike) -> Expr:
        # inline (no helper call, no generator): the model calls the builders by the
        # hundred thousand per compile
        key = (tag, *[a.ident if isinstance(a, Expr) else a for a in args])
        hit = _memo.get(key)
        if hit is None:
            if len(_memo) >= MEMO_LIMIT:
                _memo.clear()
            hit = _memo[key] = build(*args)
        return hit  # type: ignore[return-value]

    memoised.__doc__ = build.__doc__
    memoised.__name__ = build.__name__
    return memoised


def _add(*args: ExprLike) -> Expr:
    poly: dict[Monomial, int] = {}
    for arg in args:
        for mono, coeff in _to_poly(as_expr(arg)).items():
            poly[mono] = poly.get(mono, 0) + coeff
    return _from_poly(poly)


def _mul(*args: ExprLike) -> Expr:
    poly: dict[Monomial, int] = {(): 1}
    for arg in args:
        rhs = _to_poly(as_expr(arg))
        out: dict[Monomial, int] = {}
        for m1, c1 in poly.items():
            for m2, c2 in rhs.items():
                mono = tuple(sorted(m1 + m2, key=_atom_order))
                out[mono] = out.get(mono, 0) + c1 * c2
        poly = out
    return _from_poly(poly)


add = _memoised("add", _add)
mul = _memoised("mul", _mul)


def _const_content(poly: Mapping[Monomial, int]) -> int:
    """gcd of all coefficients (0 for the zero polynomial)."""
    g = 0
    for c in poly.values():
        g = math.gcd(g, c)
    return g


# ----- division-like nodes -----------------------------------------------------------


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


# ----- min / max ---------------------------------------------------------------------


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


# ----- conditions and select ---------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Cond:
    """Base class of boolean conditions over integer expressions."""

    def eval(self, env: Mapping[str, int]) -> bool:
        raise NotImplementedError

    def free_syms(self) -> frozenset[Sym]:
        raise NotImplementedError

    def free_names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.free_syms())

    def subs(self, mapping: Mapping[str, ExprLike]) -> Cond:
        raise NotImplementedError

    def decided(self) -> bool | None:
        """True/False when the domains decide the condition, else None."""
        return None

    @cached_property
    def key(self) -> str:
        return self._render()

    def __str__(self) -> str:
        return self.key

    def _render(self) -> str:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Cond) and self.key == other.key)

    def __hash__(self) -> int:
        return hash(self.key)

    def to_json(self) -> object:
        raise NotImplementedError


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


# ----- JSON round trip ---------------------------------------------------------------


@dataclass(frozen=True)
class SymTable:
    """Symbols by name, used to rebuild expressions from JSON."""

    syms: Mapping[str, Sym] = field(default_factory=dict)

    def expr_from_json(self, data: object) -> Expr:
        if isinstance(data, int) and not isinstance(data, bool):
            return Const(data)
        if not isinstance(data, dict) or len(data) != 1:
            raise ValueError(f"not an expression: {data!r}")
        ((tag, body),) = data.items()
        if tag == "sym":
            return self.syms[body]
        if tag == "poly":
            return add(
                *(mul(coeff, *(self.expr_from_json(a) for a in mono)) for coeff, mono in body)
            )
        if tag in _BINARY_BUILDERS:
            return _BINARY_BUILDERS[tag](self.expr_from_json(body[0]), self.expr_from_json(body[1]))
        if tag in ("min", "max"):
            build = minimum if tag == "min" else maximum
            return build(*(self.expr_from_json(a) for a in body))
        if tag == "select":
            return select(
                self.cond_from_json(body[0]),
                self.expr_from_json(body[1]),
                self.expr_from_json(body[2]),
            )
        raise ValueError(f"unknown expression tag {tag!r}")

    def cond_from_json(self, data: object) -> Cond:
        if isinstance(data, bool):
            return BoolConst(data)
        if not isinstance(data, dict) or len(data) != 1:
            raise ValueError(f"not a condition: {data!r}")
        ((tag, body),) = data.items()
        if tag == "cmp":
            return cmp(body[0], self.expr_from_json(body[1]), self.expr_from_json(body[2]))
        if tag in ("and", "or"):
            build = conj if tag == "and" else disj
            return build(*(self.cond_from_json(c) for c in body))
        raise ValueError(f"unknown condition tag {tag!r}")


_BINARY_BUILDERS: dict[str, Callable[[Expr, Expr], Expr]] = {
    "floordiv": floordiv,
    "ceildiv": ceildiv,
    "mod": mod,
}
