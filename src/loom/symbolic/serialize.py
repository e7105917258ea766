"""Expressions and conditions rebuilt from their JSON form (`to_json`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from loom.symbolic.cond import BoolConst, cmp, conj, disj, select
from loom.symbolic.division import ceildiv, floordiv, mod
from loom.symbolic.expr import Cond, Const, Expr, Sym
from loom.symbolic.extremum import maximum, minimum
from loom.symbolic.poly import add, mul


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
