"""The HEG of a candidate as the model's tests read it: its grid pipe, its grid loop,
and the candidate with every load on the reader."""

from __future__ import annotations

from dataclasses import replace

from loom.ir.candidate import Candidate
from loom.ir.problem import For, Pipe, Seq
from loom.model import build_problem


def grid_pipe(b, cand: Candidate, arch) -> tuple[Pipe, dict[str, tuple[int, ...]]]:  # type: ignore[no-untyped-def]
    problem = build_problem(b, cand, arch, "HiFi4", 1)
    assert isinstance(problem.heg, Seq)
    waves = problem.heg.children[1]
    assert isinstance(waves, For) and isinstance(waves.body, Pipe)
    return waves.body, problem.domains


def on_reader(cand: Candidate) -> Candidate:
    """`cand` with every load on the reader (flash decode's K and V on NoC0, Wormhole's
    choice at the paper's shapes; a small grid may split them)."""
    loads = tuple(replace(c, engine="reader") if c.kind == "load" else c for c in cand.copies)
    return replace(cand, copies=loads)


def grid_loop(grid: Pipe) -> tuple[For, int]:
    assert isinstance(grid.body, Seq)
    for i, node in enumerate(grid.body.children):
        if isinstance(node, For):
            return node, i
    raise AssertionError("no loop in the grid body")
