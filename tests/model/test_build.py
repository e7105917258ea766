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
