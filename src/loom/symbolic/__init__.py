"""Symbols and integer expressions: the unknowns that survive every stage (paper §2.2)."""

from loom.symbolic.cond import And, BoolConst, Cmp, Or, Select, cmp, conj, disj, select
from loom.symbolic.division import CeilDiv, FloorDiv, Mod, ceildiv, floordiv, mod
from loom.symbolic.expr import (
    Builders,
    Cond,
    Const,
    Expr,
    ExprLike,
    Sym,
    SymbolicError,
    as_expr,
    bind_builders,
)
from loom.symbolic.extremum import Max, Min, maximum, minimum
from loom.symbolic.poly import Poly, add, mul
from loom.symbolic.serialize import SymTable

# Expr's operators call these; their families import loom.symbolic.expr, not the reverse.
bind_builders(Builders(add=add, mul=mul, floordiv=floordiv, mod=mod, cmp=cmp))

__all__ = [
    "And",
    "BoolConst",
    "CeilDiv",
    "Cmp",
    "Cond",
    "Const",
    "Expr",
    "ExprLike",
    "FloorDiv",
    "Max",
    "Min",
    "Mod",
    "Or",
    "Poly",
    "Select",
    "Sym",
    "SymTable",
    "SymbolicError",
    "add",
    "as_expr",
    "ceildiv",
    "cmp",
    "conj",
    "disj",
    "floordiv",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "select",
]
