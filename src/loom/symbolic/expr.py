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

This module holds the two base types (:class:`Expr`, :class:`Cond`) and the leaves
(:class:`Const`, :class:`Sym`). Each family of nodes lives with its canonicalising
builder: polynomials in ``poly``, divisions in ``division``, ``min``/``max`` in
``extremum``, conditions and ``select`` in ``cond``. They import this module; the
builders behind :class:`Expr`'s operators are bound here by the package once every
family is loaded (:func:`bind_builders`), so the imports run one way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
        return _ops.add(self, other)

    def __radd__(self, other: ExprLike) -> Expr:
        return _ops.add(other, self)

    def __sub__(self, other: ExprLike) -> Expr:
        return _ops.add(self, _ops.mul(-1, other))

    def __rsub__(self, other: ExprLike) -> Expr:
        return _ops.add(other, _ops.mul(-1, self))

    def __mul__(self, other: ExprLike) -> Expr:
        return _ops.mul(self, other)

    def __rmul__(self, other: ExprLike) -> Expr:
        return _ops.mul(other, self)

    def __neg__(self) -> Expr:
        return _ops.mul(-1, self)

    def __floordiv__(self, other: ExprLike) -> Expr:
        return _ops.floordiv(self, other)

    def __rfloordiv__(self, other: ExprLike) -> Expr:
        return _ops.floordiv(other, self)

    def __mod__(self, other: ExprLike) -> Expr:
        return _ops.mod(self, other)

    # ----- comparisons build conditions (equality stays structural) ---------------------
    def le(self, other: ExprLike) -> Cond:
        return _ops.cmp("<=", self, other)

    def lt(self, other: ExprLike) -> Cond:
        return _ops.cmp("<", self, other)

    def ge(self, other: ExprLike) -> Cond:
        return _ops.cmp(">=", self, other)

    def gt(self, other: ExprLike) -> Cond:
        return _ops.cmp(">", self, other)

    def eq(self, other: ExprLike) -> Cond:
        return _ops.cmp("==", self, other)

    def ne(self, other: ExprLike) -> Cond:
        return _ops.cmp("!=", self, other)

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


# ----- the builders behind the operators ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Builders:
    """The canonicalising builders that :class:`Expr`'s operators and comparisons call;
    each lives with its node family, which imports this module."""

    add: Callable[..., Expr]
    mul: Callable[..., Expr]
    floordiv: Callable[[ExprLike, ExprLike], Expr]
    mod: Callable[[ExprLike, ExprLike], Expr]
    cmp: Callable[[str, ExprLike, ExprLike], Cond]


_ops: Builders
"""Bound once by :func:`bind_builders` (``loom/symbolic/__init__.py``), before any
expression is built."""


def bind_builders(builders: Builders) -> None:
    global _ops
    _ops = builders
