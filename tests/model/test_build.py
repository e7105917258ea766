"""Building problems: what the candidates of one compile share is built once."""

from __future__ import annotations

import pytest

from loom.mapping import enumerate_candidates
from loom.model.build import Legal, build_problem
from loom.solve.rank import problem_key


@pytest.mark.parametrize("kernel", ["gemm", "flash_attention"])
def test_shared_legality_builds_the_problem_each_candidate_gets_alone(  # type: ignore[no-untyped-def]
    buffered, wormhole, kernel
) -> None:
    b = buffered[kernel]
    cands = enumerate_candidates(b, wormhole).candidates[:80]
    legal: Legal = {}
    for c in cands:
        shared = build_problem(b, c, wormhole, "HiFi4", 0, legal)
        alone = build_problem(b, c, wormhole, "HiFi4", 0)
        assert problem_key(shared) == problem_key(alone)
        assert shared.split_domains == alone.split_domains
        assert shared.infeasible_reason == alone.infeasible_reason
    # several candidates share a split, so fewer legalities than candidates were built
    assert len(legal) < len(cands)


def test_the_dataflow_buffers_of_a_core_are_a_legality_constraint(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """GEMM has four allocations (A, B, the store and the accumulator, which keeps no
    block when it lives in the output's): a core of 3 buffers fits only with the
    accumulator placed in the output; a core of 2 fits none, refused by name."""
    import dataclasses

    from loom.model.build import check_feasible

    b = buffered["gemm"]
    (cand, *_) = enumerate_candidates(b, wormhole).candidates
    (con,) = [
        c for c in build_problem(b, cand, wormhole, "HiFi4", 0).constraints
        if c.name == "dataflow_buffers"
    ]  # fmt: skip
    (acc,) = b.accumulators
    knob = acc.knob
    counts = {p: con.cond.eval({knob: p}) for p in range(len(acc.placements))}
    assert counts == {p: True for p in counts}  # 4 <= 32 whatever the placement
    small = dataclasses.replace(wormhole, dataflow_buffers=3)
    (con,) = [
        c for c in build_problem(b, cand, small, "HiFi4", 0).constraints
        if c.name == "dataflow_buffers"
    ]  # fmt: skip
    fits = [p for p in range(len(acc.placements)) if con.cond.eval({knob: p})]
    assert fits == ([2] if len(acc.placements) == 3 else [])
    tiny = dataclasses.replace(wormhole, dataflow_buffers=2)
    reason = check_feasible(b, cand, tiny)
    assert "dataflow buffers" in reason and "the 2 one core" in reason
