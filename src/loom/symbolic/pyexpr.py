"""Print expressions as Python source and compile them into fast callables.

Used by the exhaustive enumeration oracle (millions of evaluations) and by code
generators that print index arithmetic. Division semantics match :meth:`Expr.eval`
(positive divisors; ceildiv rounds up).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loom.symbolic.cond import And, BoolConst, Cmp, Or, Select
from loom.symbolic.division import CeilDiv, FloorDiv, Mod
from loom.symbolic.expr import Cond, Const, Expr, Sym
from loom.symbolic.extremum import Max, Min
from loom.symbolic.poly import Poly


def _atom(e: Expr) -> str:
    text = to_python(e)
    return text if isinstance(e, Const | Sym) and not text.startswith("-") else f"({text})"


def _operand(e: Expr) -> str:
    """A comparison operand: arithmetic binds tighter than `<`, a conditional does not."""
    text = to_python(e)
    return f"({text})" if isinstance(e, Select) else text


def _term(mono: tuple[Expr, ...], coeff: int) -> str:
    factors = [_atom(a) for a in mono]
    if abs(coeff) != 1 or not factors:
        factors.insert(0, str(abs(coeff)))
    return " * ".join(factors)


def to_python(e: Expr) -> str:
    """Readable Python source: `4 * core_y + 2 * tile_k_id`, `(a + b) // 32`."""
    match e:
        case Const(value=v):
            return str(v)
        case Sym(name=n):
            return n
        case Poly(terms=terms):
            out = ""
            for mono, coeff in terms:
                body = _term(mono, coeff)
                if not out:
                    out = f"-{body}" if coeff < 0 else body
                else:
                    out += f" - {body}" if coeff < 0 else f" + {body}"
            return out
        case FloorDiv(lhs=a, rhs=b):
            return f"{_atom(a)} // {_atom(b)}"
        case Mod(lhs=a, rhs=b):
            return f"{_atom(a)} % {_atom(b)}"
        case CeilDiv(lhs=a, rhs=b):
            return f"-(-{_atom(a)} // {_atom(b)})"
        case Min(args=args):
            return f"min({', '.join(to_python(a) for a in args)})"
        case Max(args=args):
            return f"max({', '.join(to_python(a) for a in args)})"
        case Select(cond=c, if_true=t, if_false=f):
            return f"{_atom(t)} if {cond_to_python(c)} else {_atom(f)}"
    raise TypeError(f"cannot print {type(e).__name__} `{e}` as Python")


def cond_to_python(c: Cond) -> str:
    match c:
        case BoolConst(value=v):
            return "True" if v else "False"
        case Cmp(op=op, lhs=a, rhs=b):
            return f"{_operand(a)} {op} {_operand(b)}"
        case And(args=args):
            return " and ".join(f"({cond_to_python(a)})" for a in args)
        case Or(args=args):
            return " or ".join(f"({cond_to_python(a)})" for a in args)
    raise TypeError(f"cannot print {type(c).__name__} `{c}` as Python")


def compile_expr(
    e: Expr | Cond, names: Sequence[str], namespace: dict[str, object] | None = None
) -> Callable[..., int | bool]:
    """A function of the symbols `names` (positional) computing `e`. `namespace` may
    replace `min`/`max`, e.g. by elementwise versions to evaluate whole arrays at once."""
    body = cond_to_python(e) if isinstance(e, Cond) else to_python(e)
    source = f"lambda {', '.join(names)}: {body}" if names else f"lambda: {body}"
    scope: dict[str, object] = {"min": min, "max": max, **(namespace or {})}
    fn: Callable[..., int | bool] = eval(compile(source, "<loom-expr>", "eval"), scope)
    return fn
