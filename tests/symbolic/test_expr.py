"""Expressions: canonical forms, domain-aware rules, and (hypothesis) value preservation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.symbolic import (
    Const,
    Expr,
    Sym,
    SymbolicError,
    SymTable,
    ceildiv,
    cmp,
    conj,
    floordiv,
    maximum,
    minimum,
    mod,
    select,
)
from loom.symbolic.pyexpr import compile_expr

TM = Sym("tile_m", 32, 4096, 32)
TK = Sym("tile_k", 32, 512, 32)
B = Sym("b", 0, 1, 1, "knob")
SYMS = {s.name: s for s in (TM, TK, B)}


def test_polynomials_are_canonical() -> None:
    assert TM * 2 + TK * 3 - TM * 2 == TK * 3
    assert (TM + TK) * (TM - TK) == TM * TM - TK * TK
    assert str(2 * TK + TM + 4) == "2*tile_k + tile_m + 4"
    assert TM + TK == TK + TM and hash(TM + TK) == hash(TK + TM)


def test_division_rules() -> None:
    assert floordiv(TM * 64 + TK * 32, 32) == 2 * TM + TK
    assert ceildiv(ceildiv(TM, 4), 8) == ceildiv(TM, 32)
    assert floordiv(floordiv(TM, 4), 8) == floordiv(TM, 32)
    assert mod(TM * 64, 32) == Const(0)
    assert floordiv(TK, 1024) == Const(0)  # tile_k <= 512
    assert ceildiv(TM, TM) == Const(1)
    assert str(ceildiv(4096, TM)) == "ceildiv(4096, tile_m)"


def test_domain_rules() -> None:
    assert minimum(TM, 4096) == TM
    assert maximum(TM, 8) == TM
    assert minimum(TM, TK, 16) == Const(16)
    assert maximum(TK, TK + 1) == TK + 1
    assert select(TM.le(5000), 1, 2) == Const(1)
    assert cmp("<=", TK, 512) == conj()
    assert TM.bounds == (32, 4096) and (ceildiv(4096, TM)).bounds == (1, 128)


def test_eval_subs_and_errors() -> None:
    e = ceildiv(4096, TM) * (TK * 2 + 344)
    assert e.eval({"tile_m": 256, "tile_k": 64}) == 16 * (128 + 344)
    assert e.subs({"tile_m": 256}) == 16 * (TK * 2 + 344)
    with pytest.raises(SymbolicError, match="tile_k has no value"):
        e.eval({"tile_m": 256})
    with pytest.raises(SymbolicError, match="non-positive"):
        floordiv(TK, TM - 32).eval({"tile_m": 32, "tile_k": 64})


def test_symbol_domain() -> None:
    assert list(TK.domain())[:3] == [32, 64, 96]
    with pytest.raises(ValueError, match="empty domain"):
        Sym("x", 5, 3)
    with pytest.raises(ValueError, match="not an identifier"):
        Sym("tile m", 1, 3)


# ----- property tests -----------------------------------------------------------------

LEAVES = st.one_of(st.sampled_from([TM, TK, B]), st.integers(-50, 200).map(Const))


def _combine(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    pos = st.one_of(st.sampled_from([TM, TK]), st.integers(1, 64).map(Const))
    return st.one_of(
        st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
        st.tuples(children, children).map(lambda ab: ab[0] - ab[1]),
        st.tuples(children, children).map(lambda ab: ab[0] * ab[1]),
        st.tuples(children, pos).map(lambda ab: floordiv(*ab)),
        st.tuples(children, pos).map(lambda ab: ceildiv(*ab)),
        st.tuples(children, pos).map(lambda ab: mod(*ab)),
        st.tuples(children, children).map(lambda ab: minimum(*ab)),
        st.tuples(children, children).map(lambda ab: maximum(*ab)),
        st.tuples(children, children, children).map(
            lambda abc: select(cmp("<", abc[0], abc[1]), abc[1], abc[2])
        ),
    )


EXPRS = st.recursive(LEAVES, _combine, max_leaves=8)
ENVS = st.fixed_dictionaries(
    {
        "tile_m": st.sampled_from(list(TM.domain())),
        "tile_k": st.sampled_from(list(TK.domain())),
        "b": st.integers(0, 1),
    }
)


def _reference(e: Expr, env: dict[str, int]) -> int:
    """Evaluate with plain Python on the *printed* form (independent of the node classes)."""
    text = str(e).replace("select(", "_select(")
    text = text.replace("floordiv(", "_fd(").replace("ceildiv(", "_cd(").replace("mod(", "_md(")
    for op in (" <= ", " < ", " >= ", " > ", " == ", " != "):
        text = text.replace(op, op)
    return eval(
        text,
        {
            "_fd": lambda a, b: a // b,
            "_cd": lambda a, b: -(-a // b),
            "_md": lambda a, b: a % b,
            "_select": lambda c, a, b: a if c else b,
            "min": min,
            "max": max,
        },
        dict(env),
    )


@settings(max_examples=300, deadline=None)
@given(EXPRS, ENVS)
def test_simplification_preserves_value(e: Expr, env: dict[str, int]) -> None:
    try:
        value = e.eval(env)
    except SymbolicError:
        return
    assert value == _reference(e, env)
    assert compile_expr(e, list(env))(*env.values()) == value
    lo, hi = e.bounds
    assert lo <= value <= hi


def test_conditional_inside_a_comparison_prints_as_python() -> None:
    inner = select(cmp("<", TM, TK), TK, TM)
    e = select(cmp("<", TM, inner), inner, TM)
    f = compile_expr(e, ["tile_m", "tile_k"])
    for tm, tk in ((32, 64), (64, 32), (96, 96)):
        assert f(tm, tk) == e.eval({"tile_m": tm, "tile_k": tk})


@settings(max_examples=200, deadline=None)
@given(EXPRS, ENVS)
def test_json_round_trip_and_substitution(e: Expr, env: dict[str, int]) -> None:
    assert SymTable(SYMS).expr_from_json(e.to_json()) == e
    try:
        value = e.eval(env)
    except SymbolicError:
        return
    assert e.subs(env).eval({}) == value
    partial = e.subs({"tile_m": env["tile_m"]})
    assert partial.eval(env) == value


def test_interval_bounds_cover_domain() -> None:
    e = ceildiv(4096, TM) * ceildiv(512, TK) * (TM * TK * 2 + 344)
    values = [e.eval({"tile_m": m, "tile_k": k}) for m in TM.domain() for k in TK.domain()]
    assert e.bounds[0] <= min(values) and max(values) <= e.bounds[1]
    assert math.isfinite(e.bounds[1])
