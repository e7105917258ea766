"""The table bound is the exact optimum of a problem under the model: the same latency
as the exhaustive enumeration oracle, so pruning by it never drops a candidate that
could enter the top k."""

from __future__ import annotations

import pytest

from loom.mapping import enumerate_candidates
from loom.model import build_problem
from loom.solve import enumerate_problem
from loom.solve import table as table_module
from loom.solve.table import INFEASIBLE, table_bound

FLOPS = {
    "gemm": 2 * 256 * 512 * 128,
    "flash_attention": 4 * 2 * 256 * 256 * 64,
    "flash_decode": 4 * 2 * 1024 * 64,
}


@pytest.mark.parametrize("name", ["gemm", "flash_attention", "flash_decode"])
def test_table_minimum_is_the_oracle_optimum(name: str, buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    cands = enumerate_candidates(buffered[name], wormhole).candidates
    checked = 0
    grids: dict[object, table_module.Grid] = {}
    for c in cands[::3]:
        problem = build_problem(buffered[name], c, wormhole, "HiFi4", FLOPS[name])
        exact = enumerate_problem(problem)
        bound = table_bound(problem)
        # a grid shared with the problems of the same domains gives the same table
        assert table_bound(problem, grids) == bound
        if exact.solved:
            assert bound == exact.cycles
            checked += 1
        else:
            assert bound == INFEASIBLE
    assert checked > 0


def test_no_table_above_the_limit(buffered, wormhole, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    c = enumerate_candidates(buffered["gemm"], wormhole).candidates[0]
    problem = build_problem(buffered["gemm"], c, wormhole, "HiFi4", FLOPS["gemm"])
    monkeypatch.setattr(table_module, "TABLE_LIMIT", 1)
    assert table_bound(problem) is None
