"""Pruning before solving never changes the optimum: the ranking with the lower bounds
and the incumbent cutoff returns the same best schedule as solving every candidate,
and it leaves most candidates unsolved."""

from __future__ import annotations

import pytest

from loom.mapping import enumerate_candidates
from loom.model import build_problem
from loom.solve import RankOptions, core_bound, rank
from loom.solve import table as table_module
from loom.solve.bounds import class_bound, class_key, compute_path
from loom.solve.table import INFEASIBLE, table_bound

FLOPS = 2 * 256 * 512 * 128
DRAM_BYTES = (256 * 128 + 128 * 512 + 256 * 512) * 2


def test_pruned_search_returns_the_unpruned_optimum(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    b = buffered["gemm"]
    cands = enumerate_candidates(b, wormhole).candidates
    problems = {}

    def build(c):  # type: ignore[no-untyped-def]
        if c.name not in problems:
            problems[c.name] = build_problem(b, c, wormhole, "HiFi4", FLOPS)
        return problems[c.name]

    bounds = {c.name: core_bound(c, wormhole, "HiFi4", FLOPS, DRAM_BYTES, 2) for c in cands}
    pruned = rank(cands, bounds, build, RankOptions(top_k=1, jobs=1, solver="enumerate"))
    full = rank(
        cands,
        {c.name: 0 for c in cands},
        build,
        RankOptions(top_k=len(cands), jobs=1, solver="enumerate"),
    )
    best, every = pruned.top[0][0], full.top[0][0]
    assert best.cycles == every.cycles
    assert best.candidate == every.candidate
    assert best.assignment == every.assignment
    assert pruned.solved <= 0.1 * len(cands)


def _top(ranking):  # type: ignore[no-untyped-def]
    return [(s.candidate, s.cycles, s.dram_bytes, s.assignment) for s, _ in ranking.top]


@pytest.mark.slow
@pytest.mark.parametrize("tables", [True, False])
def test_pruned_top_k_is_the_unpruned_top_k(buffered, wormhole, monkeypatch, tables) -> None:  # type: ignore[no-untyped-def]
    """The whole top 5 (order, latencies, tie-breaks; assignments too, where the solver
    enumerates) is that of solving every candidate, with the table bound and with the
    compute-path fallback; only the candidates that can enter the top 5 reach the solver."""
    b = buffered["gemm"]
    cands = enumerate_candidates(b, wormhole).candidates
    problems = {c.name: build_problem(b, c, wormhole, "HiFi4", FLOPS) for c in cands}
    bounds = {c.name: core_bound(c, wormhole, "HiFi4", FLOPS, DRAM_BYTES, 2) for c in cands}
    if not tables:
        monkeypatch.setattr(table_module, "TABLE_LIMIT", 0)
    for solver in ("enumerate", "cpsat"):
        full = rank(
            cands,
            {c.name: 0 for c in cands},
            lambda c: problems[c.name],
            RankOptions(top_k=len(cands), jobs=2, solver=solver),
        )
        pruned = rank(
            cands, bounds, lambda c: problems[c.name], RankOptions(top_k=5, jobs=2, solver=solver)
        )
        if solver == "enumerate":
            assert _top(pruned) == _top(full)[:5]
        else:
            # CP-SAT proves the optimum, not which of several optimal assignments it
            # returns: with the cutoff it may return another one of the same latency
            assert [t[:3] for t in _top(pruned)] == [t[:3] for t in _top(full)[:5]]
            for s, p in pruned.top:
                assert p.objective.eval(s.assignment) == s.cycles
        if tables:
            assert pruned.solved <= 10


@pytest.mark.parametrize(
    "kernel", [pytest.param("gemm", marks=pytest.mark.slow), "flash_attention", "flash_decode"]
)
def test_a_class_bound_holds_for_every_candidate_of_the_class(buffered, wormhole, kernel) -> None:  # type: ignore[no-untyped-def]
    """Every candidate of a class has the same floored path and unfiltered domains, so
    one member's bound is every member's, and it is below each one's optimum."""
    b = buffered[kernel]
    classes: dict[tuple[object, ...], list[object]] = {}
    for c in enumerate_candidates(b, wormhole).candidates:
        classes.setdefault(class_key(c), []).append(build_problem(b, c, wormhole, "HiFi4", 0))
    assert any(len(members) > 1 for members in classes.values())
    for members in classes.values():
        first = members[0]
        path = compute_path(first.heg, floor=True)  # type: ignore[attr-defined]
        bound = class_bound(first)  # type: ignore[arg-type]
        for p in members:
            assert compute_path(p.heg, floor=True) == path  # type: ignore[attr-defined]
            assert p.split_domains == first.split_domains  # type: ignore[attr-defined]
            best = table_bound(p)  # type: ignore[arg-type]
            assert best is not None
            assert best >= INFEASIBLE or bound <= best
