"""Sums and products: the polynomial node and its builders `add` and `mul`.

Sums and products of atoms (symbols and the non-polynomial nodes) are kept as one
:class:`Poly`, a sorted tuple of monomials with integer coefficients, so that equal
polynomials print, compare and hash alike. The builders memoise on their arguments'
idents, which the other families' builders share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from loom.symbolic.expr import Const, Expr, ExprLike, as_expr, cached_property

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
