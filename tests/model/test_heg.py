"""The HEG of a candidate: where a store runs when its engine also loads inside the body."""

from __future__ import annotations

from dataclasses import replace

from loom.ir.candidate import Candidate
from loom.ir.problem import For, Pipe, Seq, Stage
from loom.mapping import enumerate_candidates
from loom.model import build_problem


def grid_pipe(b, cand: Candidate, arch) -> tuple[Pipe, dict[str, tuple[int, ...]]]:  # type: ignore[no-untyped-def]
    problem = build_problem(b, cand, arch, "HiFi4", 1)
    assert isinstance(problem.heg, Seq)
    waves = problem.heg.children[1]
    assert isinstance(waves, For) and isinstance(waves.body, Pipe)
    return waves.body, problem.domains


def test_a_store_waits_for_the_body_when_its_engine_loads_inside(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    assert any(c.kind == "load" and c.engine == "writer" for c in cand.copies)
    grid, domains = grid_pipe(b, cand, wormhole)
    assert isinstance(grid.body, Seq)
    last = grid.body.children[-1]
    # The output store follows the K loop in the body; no knob can overlap it.
    assert isinstance(last, Stage) and last.name.startswith("store@") and last.terms
    assert not grid.store.terms
    assert domains[grid.b_store.name] == (0,)

    readers = tuple(replace(c, engine="reader") if c.kind == "load" else c for c in cand.copies)
    grid, domains = grid_pipe(b, replace(cand, copies=readers), wormhole)
    assert grid.store.terms
    assert domains[grid.b_store.name] == (0, 1)
