"""Pruning before solving never changes the optimum: the ranking with the lower bounds
and the incumbent cutoff returns the same best schedule as solving every candidate,
and it leaves most candidates unsolved."""

from __future__ import annotations

from loom.mapping import enumerate_candidates
from loom.model import build_problem
from loom.solve import RankOptions, core_bound, rank

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
    solved = sum(1 for s in pruned.solutions if s.status != "pruned")
    assert solved <= 0.1 * len(cands)
