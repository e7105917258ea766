"""Integer expressions and conditions of a Program as Python source text.

Core coordinates and loop counters keep their symbol names (`core_y`, `tile_k_id`), so
an address such as `4*core_y + 2*tile_k_id` reads the same in the Program dump and in
the kernel. Only `+ - * // %`, comparisons, `and`/`or` and integer literals are used.
"""

from __future__ import annotations

from loom.symbolic import (
    And,
    BoolConst,
    CeilDiv,
    Cmp,
    Cond,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Or,
    Poly,
    Sym,
)


def _atom(e: Expr) -> str:
    text = py_expr(e)
    return text if isinstance(e, Const | Sym) and not text.startswith("-") else f"({text})"


def _term(mono: tuple[Expr, ...], coeff: int) -> str:
    factors = [_atom(a) for a in mono]
    if abs(coeff) != 1 or not factors:
        factors.insert(0, str(abs(coeff)))
    return " * ".join(factors)


def py_expr(e: Expr) -> str:
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
    raise TypeError(f"cannot print {type(e).__name__} `{e}` as a kernel expression")


def py_cond(c: Cond) -> str:
    match c:
        case BoolConst(value=v):
            return "True" if v else "False"
        case Cmp(op=op, lhs=a, rhs=b):
            return f"{py_expr(a)} {op} {py_expr(b)}"
        case And(args=args):
            return " and ".join(f"({py_cond(a)})" for a in args)
        case Or(args=args):
            return " or ".join(f"({py_cond(a)})" for a in args)
    raise TypeError(f"cannot print {type(c).__name__} `{c}` as a kernel condition")
