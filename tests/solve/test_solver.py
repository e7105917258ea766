"""CP-SAT against the exhaustive enumeration oracle, the double-buffering trade-off,
determinism across workers, and infeasibility."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from loom.errors import InfeasibleError
from loom.mapping import enumerate_candidates
from loom.model import build_problem
from loom.solve import RankOptions, enumerate_problem, rank, solve_problem
from loom.solve import encode as encode_module
from loom.solve.encode import Encoder
from loom.symbolic import Sym, ceildiv, cmp, floordiv, maximum, minimum, select

FLOPS = {
    "gemm": 2 * 256 * 512 * 128,
    "flash_attention": 4 * 2 * 256 * 256 * 64,
    "flash_decode": 4 * 2 * 1024 * 64,
}


@pytest.fixture(scope="module")
def problems(buffered, wormhole):  # type: ignore[no-untyped-def]
    out = {}
    for name, b in buffered.items():
        cands = enumerate_candidates(b, wormhole).candidates
        out[name] = [build_problem(b, c, wormhole, "HiFi4", FLOPS[name]) for c in cands[::5]]
    return out


@pytest.mark.parametrize("name", ["gemm", "flash_attention", "flash_decode"])
def test_cpsat_finds_the_oracle_optimum(name: str, problems) -> None:  # type: ignore[no-untyped-def]
    for problem in problems[name]:
        exact = enumerate_problem(problem)
        found = solve_problem(problem)
        assert found.status in ("optimal", "infeasible") and found.status == exact.status
        if found.solved:
            assert found.cycles == exact.cycles
            assert problem.objective.eval(found.assignment) == found.cycles
            assert all(c.cond.eval(found.assignment) for c in problem.constraints)


def test_the_table_minimum_as_floor_keeps_the_optimum(problems) -> None:  # type: ignore[no-untyped-def]
    """The ranking hands CP-SAT each tabulated problem's exact minimum as the objective's
    lower bound (`loom.solve.rank`): the solution still reaches it, and is legal."""
    from loom.solve.table import table_bound

    for problem in problems["gemm"][:6] + problems["flash_attention"][:3]:
        exact = enumerate_problem(problem)
        if not exact.solved:
            continue
        floor = table_bound(problem, {})
        assert floor == exact.cycles
        found = solve_problem(problem, floor=floor)
        assert (found.status, found.cycles) == ("optimal", exact.cycles)
        assert all(c.cond.eval(found.assignment) for c in problem.constraints)


def test_structural_encoding_without_tables(problems, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With tabulation off, products, divisions and selections are encoded directly."""
    monkeypatch.setattr(encode_module, "TABLE_SYMBOLS", 0)
    for problem in problems["gemm"][:4] + problems["flash_decode"][:2]:
        exact = enumerate_problem(problem)
        found = solve_problem(problem)
        assert (found.status, found.cycles) == (exact.status, exact.cycles)


def _gemm_problem(buffered, arch, name_prefix: str):  # type: ignore[no-untyped-def]
    cands = enumerate_candidates(buffered["gemm"], arch).candidates
    cand = next(c for c in cands if c.name.startswith(name_prefix))
    return build_problem(buffered["gemm"], cand, arch, "HiFi4", FLOPS["gemm"])


def test_double_buffering_trades_against_tile_size(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """For some L1 budget, overlapping the loads forces smaller tiles; the solver's
    choice under that budget is still the oracle's."""
    prefix = "gemm__x1_y1__single"  # one core: big tiles, so L1 binds
    found_tradeoff = False
    for budget in range(60_000, 1_400_000, 60_000):
        arch = dataclasses.replace(wormhole, l1_usable_bytes=budget)
        problem = _gemm_problem(buffered, arch, prefix)
        best = {}
        for knob in (0, 1):
            fixed = dataclasses.replace(
                problem, domains={**problem.domains, "b_load_tile_k": (knob,)}
            )
            best[knob] = enumerate_problem(fixed)
        if not (best[0].solved and best[1].solved):
            continue
        size = {k: best[k].assignment["tile_k"] * best[k].assignment["tile_m"] for k in (0, 1)}
        if size[1] < size[0]:
            found_tradeoff = True
            exact = enumerate_problem(problem)
            solved = solve_problem(problem)
            assert solved.cycles == exact.cycles == min(best[0].cycles, best[1].cycles)
    assert found_tradeoff, "no L1 budget made double buffering shrink the tiles"


def test_ranking_is_independent_of_jobs(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    b = buffered["gemm"]
    cands = enumerate_candidates(b, wormhole).candidates
    bounds = {c.name: 0 for c in cands}

    def run(jobs: int):  # type: ignore[no-untyped-def]
        return rank(
            cands,
            bounds,
            lambda c: build_problem(b, c, wormhole, "HiFi4", FLOPS["gemm"]),
            RankOptions(top_k=3, jobs=jobs),
        )

    one, two = run(1), run(2)
    assert [s.candidate for s, _ in one.top] == [s.candidate for s, _ in two.top]
    assert [(s.candidate, s.status, s.cycles, s.assignment) for s in one.solutions] == [
        (s.candidate, s.status, s.cycles, s.assignment) for s in two.solutions
    ]


def test_too_small_l1_is_reported(wormhole) -> None:  # type: ignore[no-untyped-def]
    import loom

    arch = dataclasses.replace(wormhole, l1_usable_bytes=8192)
    with pytest.raises(InfeasibleError, match="L1 footprint"):
        loom.compile("gemm", shape={"M": 256, "N": 512, "K": 128}, arch=arch, jobs=1)


# ----- the encoder on random expressions --------------------------------------------

X = Sym("x", 32, 256, 32)
Y = Sym("y", 1, 6)
DOMAINS = {"x": tuple(X.domain()), "y": tuple(Y.domain())}
ATOMS = st.one_of(st.sampled_from([X, Y]), st.integers(0, 50))
POS = st.one_of(st.sampled_from([X, Y]), st.integers(1, 9))


def _exprs(children):  # type: ignore[no-untyped-def]
    return st.one_of(
        st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
        st.tuples(children, children).map(lambda ab: ab[0] * ab[1]),
        st.tuples(children, POS).map(lambda ab: ceildiv(*ab)),
        st.tuples(children, POS).map(lambda ab: floordiv(*ab)),
        st.tuples(children, children).map(lambda ab: maximum(*ab)),
        st.tuples(children, children).map(lambda ab: minimum(*ab)),
        st.tuples(children, children).map(lambda ab: select(cmp("<=", ab[0], 40), ab[0], ab[1])),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        ATOMS.map(lambda a: a if not isinstance(a, int) else X * 0 + a), _exprs, max_leaves=6
    )
)
def test_encoder_matches_brute_force(e) -> None:  # type: ignore[no-untyped-def]
    for tables in (0, 1):
        encode_module.TABLE_SYMBOLS = tables
        try:
            model = cp_model.CpModel()
            enc = Encoder(model, DOMAINS)
            obj = enc.expr(e)
            model.Minimize(obj.var)
            solver = cp_model.CpSolver()
            solver.parameters.num_workers = 1
            assert solver.Solve(model) == cp_model.OPTIMAL
            expected = min(
                e.eval({"x": x, "y": y}) for x, y in itertools.product(*DOMAINS.values())
            )
            assert solver.Value(obj.var) == expected
        finally:
            encode_module.TABLE_SYMBOLS = 1
