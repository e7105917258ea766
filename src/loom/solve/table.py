"""Evaluate a problem at every point of its domain product at once (numpy).

The problems are small (a few tile symbols with a handful of legal values each, and
0/1 knobs), so the whole table of T(x, b) over the legal assignments costs about a
millisecond: every node of the expression DAG is evaluated once over the grid,
sub-expressions shared by key. The ranking uses the table's minimum as the tightest
admissible lower bound of a candidate's optimum, so that only candidates that can
enter the top k are handed to CP-SAT.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from loom.ir.problem import Problem
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
)

TABLE_LIMIT = 2_000_000
"""Largest domain product evaluated as a table (above it: no table)."""

Array = NDArray[np.int64]
Mask = NDArray[np.bool_]

_CMP = {
    "<=": np.less_equal,
    "<": np.less,
    ">=": np.greater_equal,
    ">": np.greater,
    "==": np.equal,
    "!=": np.not_equal,
}


class Grid:
    """Every symbol's values over the domain product (broadcast shapes: one axis per
    symbol, so an expression of few symbols stays small until it meets the others)."""

    def __init__(self, domains: dict[str, tuple[int, ...]]) -> None:
        self.names = list(domains)
        self.shape = tuple(len(domains[n]) for n in self.names)
        self.values: dict[str, Array] = {}
        for i, name in enumerate(self.names):
            shape = [1] * len(self.names)
            shape[i] = len(domains[name])
            self.values[name] = np.array(domains[name], dtype=np.int64).reshape(shape)
        self.memo: dict[str, Array] = {}
        self.cmemo: dict[str, Mask] = {}

    def expr(self, e: Expr) -> Array:
        if isinstance(e, Const):
            return np.array(e.value, dtype=np.int64)
        if isinstance(e, Sym):
            return self.values[e.name]
        key = e.key
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._expr(e)
        return hit

    def _expr(self, e: Expr) -> Array:
        match e:
            case Poly(terms=terms):
                total: Array | None = None
                for mono, coeff in terms:
                    term: Array = np.array(coeff, dtype=np.int64)
                    for atom in mono:
                        term = term * self.expr(atom)
                    total = term if total is None else total + term
                assert total is not None
                return total
            case FloorDiv(lhs=a, rhs=b):
                return self.expr(a) // self.expr(b)
            case CeilDiv(lhs=a, rhs=b):
                return -(-self.expr(a) // self.expr(b))
            case Mod(lhs=a, rhs=b):
                return self.expr(a) % self.expr(b)
            case Max(args=args):
                return _reduce(np.maximum, [self.expr(a) for a in args])
            case Min(args=args):
                return _reduce(np.minimum, [self.expr(a) for a in args])
            case Select(cond=c, if_true=t, if_false=f):
                return np.where(self.cond(c), self.expr(t), self.expr(f))
        raise TypeError(f"cannot tabulate {type(e).__name__}")

    def cond(self, c: Cond) -> Mask:
        key = c.key
        hit = self.cmemo.get(key)
        if hit is None:
            hit = self.cmemo[key] = self._cond(c)
        return hit

    def _cond(self, c: Cond) -> Mask:
        match c:
            case BoolConst(value=v):
                return np.array(v)
            case Cmp(op=op, lhs=a, rhs=b):
                return np.asarray(_CMP[op](self.expr(a), self.expr(b)))
            case And(args=args):
                return _reduce(np.logical_and, [self.cond(a) for a in args])
            case Or(args=args):
                return _reduce(np.logical_or, [self.cond(a) for a in args])
        raise TypeError(f"cannot tabulate {type(c).__name__}")


def _reduce(op: np.ufunc, parts: list[np.ndarray]) -> np.ndarray:
    out = parts[0]
    for p in parts[1:]:
        out = op(out, p)
    return out


def table_bound(problem: Problem, grids: dict[object, Grid] | None = None) -> int | None:
    """The least T(x, b) over the legal assignments (exact), None when the domain
    product is too large to tabulate; a problem with no legal assignment gets a bound
    above every latency, so that a cutoff prunes it. `grids` keeps one grid per domain
    product across problems: candidates of one split share their constraints and
    compute terms, which are then evaluated once."""
    domains = problem.domains
    if not all(domains.values()):
        return INFEASIBLE
    if math.prod(len(d) for d in domains.values()) > TABLE_LIMIT:
        return None
    key = tuple(domains.items())
    grid = grids.get(key) if grids is not None else None
    if grid is None:
        grid = Grid(domains)
        if grids is not None:
            grids[key] = grid
    legal: Mask = np.ones(grid.shape, dtype=bool)
    for con in problem.constraints:
        legal = legal & grid.cond(con.cond)
    if not legal.any():
        return INFEASIBLE
    cycles = np.broadcast_to(grid.expr(problem.objective), grid.shape)
    return int(cycles[legal].min())


INFEASIBLE = 2**62
"""The bound of a problem without a legal assignment."""
