"""Encode Loom expressions and conditions into an OR-Tools CP-SAT model.

Every symbol takes one of its finite domain values through an index variable
(`add_element`), and the variable is named after the symbol so that the model reads in
source terms. Any sub-expression of a single symbol is tabulated exactly over its
domain (`add_element`) — the ceildivs, tile counts and per-tile costs — and the
remaining structure becomes products, maxima and knob-enforced selections. The encoding
is exact: no linearisation error. (`TABLE_SYMBOLS` > 1 also tabulates joint domains with
`add_allowed_assignments`; measured slower on the shipped kernels, so it is off.)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ortools.sat.python import cp_model

from loom.symbolic import (
    And,
    BoolConst,
    CeilDiv,
    Cmp,
    Cond,
    Const,
    Expr,
    FloorDiv,
    Max,
    Min,
    Mod,
    Or,
    Poly,
    Select,
    Sym,
    mul,
)
from loom.symbolic.pyexpr import compile_expr

TABLE_LIMIT = 4096
TABLE_SYMBOLS = 1
INT_LIMIT = 2**62


@dataclass(frozen=True)
class Encoded:
    """A CP-SAT integer expression (variable or constant) with bounds."""

    var: cp_model.IntVar | int
    lo: int
    hi: int


def _const(v: int) -> Encoded:
    return Encoded(v, v, v)


class Encoder:
    def __init__(self, model: cp_model.CpModel, domains: dict[str, tuple[int, ...]]) -> None:
        self.m = model
        self.domains = domains
        self.index: dict[str, cp_model.IntVar] = {}
        self.value: dict[str, Encoded] = {}
        self.cache: dict[str, Encoded] = {}
        self.count = 0
        for name, values in domains.items():
            idx = model.new_int_var(0, len(values) - 1, f"{name}_idx")
            var = model.new_int_var_from_domain(cp_model.Domain.FromValues(list(values)), name)
            model.add_element(idx, list(values), var)
            self.index[name] = idx
            self.value[name] = Encoded(var, min(values), max(values))

    def _new(self, lo: int, hi: int, hint: str) -> cp_model.IntVar:
        self.count += 1
        lo, hi = max(lo, -INT_LIMIT), min(hi, INT_LIMIT)
        return self.m.new_int_var(lo, hi, f"t{self.count}_{hint}"[:60])

    # ----- tabulation ------------------------------------------------------------------
    def _table(self, e: Expr, names: list[str]) -> Encoded | None:
        sizes = [len(self.domains[n]) for n in names]
        if math.prod(sizes) > TABLE_LIMIT:
            return None
        fn = compile_expr(e, names)
        rows = [
            (*idx, fn(*(self.domains[n][i] for n, i in zip(names, idx, strict=True))))
            for idx in itertools.product(*(range(s) for s in sizes))
        ]
        values = [r[-1] for r in rows]
        lo, hi = min(values), max(values)
        if lo == hi:
            return _const(lo)
        var = self._new(lo, hi, "tab")
        if len(names) == 1:
            self.m.add_element(self.index[names[0]], values, var)
        else:
            self.m.add_allowed_assignments([*(self.index[n] for n in names), var], rows)
        return Encoded(var, lo, hi)

    # ----- expressions ---------------------------------------------------------------
    def expr(self, e: Expr) -> Encoded:
        if isinstance(e, Const):
            return _const(e.value)
        if isinstance(e, Sym):
            return self.value[e.name]
        key = e.key
        if key in self.cache:
            return self.cache[key]
        names = sorted(e.free_names())
        result = self._table(e, names) if len(names) <= TABLE_SYMBOLS else None
        if result is None:
            result = self._structural(e)
        self.cache[key] = result
        return result

    def _structural(self, e: Expr) -> Encoded:
        match e:
            case Poly(terms=terms):
                parts = [self._monomial(mono, coeff) for mono, coeff in terms]
                lo, hi = sum(p.lo for p in parts), sum(p.hi for p in parts)
                var = self._new(lo, hi, "sum")
                self.m.add(var == sum(p.var for p in parts))
                return Encoded(var, lo, hi)
            case Max(args=args) | Min(args=args):
                parts = [self.expr(a) for a in args]
                is_max = isinstance(e, Max)
                lo = max(p.lo for p in parts) if is_max else min(p.lo for p in parts)
                hi = max(p.hi for p in parts) if is_max else min(p.hi for p in parts)
                var = self._new(lo, hi, "max" if is_max else "min")
                (self.m.add_max_equality if is_max else self.m.add_min_equality)(
                    var, [p.var for p in parts]
                )
                return Encoded(var, lo, hi)
            case Select(cond=c, if_true=t, if_false=f):
                lit = self.literal(c)
                a, b = self.expr(t), self.expr(f)
                var = self._new(min(a.lo, b.lo), max(a.hi, b.hi), "sel")
                self.m.add(var == a.var).OnlyEnforceIf(lit)
                self.m.add(var == b.var).OnlyEnforceIf(lit.Not())
                return Encoded(var, min(a.lo, b.lo), max(a.hi, b.hi))
            case FloorDiv(lhs=a, rhs=b) | CeilDiv(lhs=a, rhs=b) | Mod(lhs=a, rhs=b):
                return self._division(e, self.expr(a), self.expr(b))
        raise TypeError(f"cannot encode {type(e).__name__}")

    def _monomial(self, mono: tuple[Expr, ...], coeff: int) -> Encoded:
        if not mono:
            return _const(coeff)
        groups: list[list[Expr]] = []
        for atom in mono:  # pack atoms into groups small enough to tabulate
            for g in groups:
                names = set().union(*(x.free_names() for x in g)) | atom.free_names()
                if (
                    len(names) <= TABLE_SYMBOLS
                    and math.prod(len(self.domains[n]) for n in names) <= TABLE_LIMIT
                ):
                    g.append(atom)
                    break
            else:
                groups.append([atom])
        factors = [self.expr(mul(*g)) for g in groups]
        acc = factors[0]
        for f in factors[1:]:
            acc = self._product(acc, f)
        lo, hi = sorted((acc.lo * coeff, acc.hi * coeff))
        var = self._new(lo, hi, "scale")
        self.m.add(var == coeff * acc.var)
        return Encoded(var, lo, hi)

    def _product(self, a: Encoded, b: Encoded) -> Encoded:
        corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        var = self._new(min(corners), max(corners), "prod")
        self.m.add_multiplication_equality(var, [a.var, b.var])
        return Encoded(var, min(corners), max(corners))

    def _division(self, e: Expr, a: Encoded, b: Encoded) -> Encoded:
        if b.lo <= 0:
            raise ValueError(f"divisor of {e} may be non-positive")
        if isinstance(e, Mod):
            var = self._new(0, b.hi - 1, "mod")
            self.m.add_modulo_equality(var, a.var, b.var)
            return Encoded(var, 0, b.hi - 1)
        num = a
        if isinstance(e, CeilDiv):
            lo, hi = a.lo + b.lo - 1, a.hi + b.hi - 1
            shifted = self._new(lo, hi, "num")
            self.m.add(shifted == a.var + b.var - 1)
            num = Encoded(shifted, lo, hi)
        lo, hi = min(num.lo // b.hi, num.lo // b.lo), max(num.hi // b.lo, num.hi // b.hi)
        var = self._new(lo, hi, "div")
        self.m.add_division_equality(var, num.var, b.var)
        return Encoded(var, lo, hi)

    # ----- conditions --------------------------------------------------------------
    def literal(self, c: Cond) -> cp_model.IntVar:
        lit = self.m.new_bool_var(f"c{self.count}")
        self.count += 1
        self.enforce(c, lit)
        self.enforce_not(c, lit.Not())
        return lit

    def enforce(self, c: Cond, lit: cp_model.IntVar | None = None) -> None:
        """Add `c` (only when `lit` holds, if given)."""
        match c:
            case BoolConst(value=True):
                return
            case BoolConst(value=False):
                ct = self.m.add_bool_or([])
            case Cmp(op=op, lhs=a, rhs=b):
                ct = self.m.add(_compare(op, self.expr(a).var, self.expr(b).var))
            case And(args=args):
                for arg in args:
                    self.enforce(arg, lit)
                return
            case Or(args=args):
                ct = self.m.add_bool_or([self.literal(arg) for arg in args])
            case _:
                raise TypeError(f"cannot encode condition {c}")
        if lit is not None:
            ct.OnlyEnforceIf(lit)

    def enforce_not(self, c: Cond, lit: cp_model.LiteralT) -> None:
        match c:
            case Cmp(op=op, lhs=a, rhs=b):
                self.m.add(_compare(_NEGATE[op], self.expr(a).var, self.expr(b).var)).OnlyEnforceIf(
                    lit
                )
            case BoolConst(value=v):
                if v:
                    self.m.add_bool_or([]).OnlyEnforceIf(lit)
            case _:
                raise TypeError(f"cannot negate condition {c}")


_NEGATE = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}


def _compare(
    op: str, a: cp_model.IntVar | int, b: cp_model.IntVar | int
) -> cp_model.BoundedLinearExpression | bool:
    match op:
        case "<=":
            return a <= b
        case "<":
            return a < b
        case ">=":
            return a >= b
        case ">":
            return a > b
        case "==":
            return a == b
        case "!=":
            return a != b
    raise KeyError(op)
