"""Print expressions as Python source and compile them into fast callables.

Used by the exhaustive enumeration oracle (millions of evaluations) and by code
generators that print index arithmetic. Division semantics match :meth:`Expr.eval`
(positive divisors; ceildiv rounds up).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loom.symbolic.expr import (
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


def to_python(e: Expr) -> str:
    match e:
        case Const(value=v):
            return str(v)
        case Sym(name=n):
            return n
        case Poly(terms=terms):
            parts = []
            for mono, coeff in terms:
                factors = [str(coeff)] if coeff != 1 or not mono else []
                factors += [f"({to_python(a)})" for a in mono]
                parts.append("*".join(factors))
            return " + ".join(parts)
        case FloorDiv(lhs=a, rhs=b):
            return f"(({to_python(a)}) // ({to_python(b)}))"
        case CeilDiv(lhs=a, rhs=b):
            return f"(-((-({to_python(a)})) // ({to_python(b)})))"
        case Mod(lhs=a, rhs=b):
            return f"(({to_python(a)}) % ({to_python(b)}))"
        case Min(args=args):
            return f"min({', '.join(to_python(a) for a in args)})"
        case Max(args=args):
            return f"max({', '.join(to_python(a) for a in args)})"
        case Select(cond=c, if_true=t, if_false=f):
            return f"(({to_python(t)}) if ({cond_to_python(c)}) else ({to_python(f)}))"
    raise TypeError(f"cannot print {type(e).__name__} as Python")


def cond_to_python(c: Cond) -> str:
    match c:
        case BoolConst(value=v):
            return str(v)
        case Cmp(op=op, lhs=a, rhs=b):
            return f"(({to_python(a)}) {op} ({to_python(b)}))"
        case And(args=args):
            return "(" + " and ".join(cond_to_python(a) for a in args) + ")"
        case Or(args=args):
            return "(" + " or ".join(cond_to_python(a) for a in args) + ")"
    raise TypeError(f"cannot print {type(c).__name__} as Python")


def compile_expr(e: Expr | Cond, names: Sequence[str]) -> Callable[..., int | bool]:
    """A function of the symbols `names` (positional) computing `e`."""
    body = cond_to_python(e) if isinstance(e, Cond) else to_python(e)
    source = f"lambda {', '.join(names)}: {body}" if names else f"lambda: {body}"
    return eval(compile(source, "<loom-expr>", "eval"), {"min": min, "max": max})
