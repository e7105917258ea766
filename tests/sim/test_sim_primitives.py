"""Transaction-level primitives: the shapes of the published NoC/DRAM measurements."""

from __future__ import annotations

import pytest

from loom.arch import load_arch
from loom.sim import Copy, from_arch, run_copies
from loom.sim.params import SimParams


@pytest.fixture(scope="module", params=["wormhole_n150", "blackhole_p150"])
def params(request: pytest.FixtureRequest) -> SimParams:
    return from_arch(load_arch(request.param))


def _cycles(p: SimParams, c: Copy) -> float:
    return run_copies(p, [[c]])[0]


def test_large_writes_approach_the_link_rate(params: SimParams) -> None:
    c = Copy("write", (0, 0), 65536, 64, peer=(1, 1))
    rate = c.size * c.count / _cycles(params, c)
    assert 0.9 * params.size_table[-1][1] < rate <= params.link_bytes_per_cycle


def test_small_transactions_are_issue_bound(params: SimParams) -> None:
    c = Copy("write", (0, 0), 32, 256, peer=(1, 1))
    per_txn = _cycles(params, c) / 256
    assert per_txn == pytest.approx(
        max(params.issue_cycles, 32 / params.size_bandwidth(32)), rel=0.1
    )


def test_dram_read_is_capped_per_reader(params: SimParams) -> None:
    c = Copy("dram_read", (0, 0), 8192, 256)
    rate = c.size * c.count / _cycles(params, c)
    assert rate == pytest.approx(params.dram_reader_bytes_per_cycle, rel=0.02)


def test_one_bank_is_capped_by_the_bank(params: SimParams) -> None:
    c = Copy("dram_read", (0, 0), 8192, 64, one_bank=True)
    rate = c.size * c.count / _cycles(params, c)
    assert rate <= params.bank_bytes_per_cycle + 1e-9
    assert rate > 0.9 * min(params.bank_bytes_per_cycle, params.size_bandwidth(8192))


def test_many_readers_share_the_banks(params: SimParams) -> None:
    n_banks = len(params.bank_noc_xy)
    grid = [(y, x) for y in range(4) for x in range(4)]
    engines = [
        [Copy("dram_read", core, 8192, 64, first_bank=i % n_banks)] for i, core in enumerate(grid)
    ]
    total = sum(c[0].size * c[0].count for c in engines)
    rate = total / max(run_copies(params, engines))
    assert rate <= n_banks * params.bank_bytes_per_cycle * (1 + 1e-9)


def test_linked_multicast_beats_unlinked(params: SimParams) -> None:
    dsts = tuple((y, x) for y in range(4) for x in range(4) if (y, x) != (0, 0))
    unlinked = _cycles(params, Copy("multicast", (0, 0), 2048, 64, dsts=dsts, linked=False))
    linked = _cycles(params, Copy("multicast", (0, 0), 2048, 64, dsts=dsts, linked=True))
    assert linked < unlinked


def test_latency_grows_with_hops(params: SimParams) -> None:
    near = _cycles(params, Copy("write", (0, 0), 64, 1, peer=(0, 1)))
    far = _cycles(params, Copy("write", (0, 0), 64, 1, peer=(6, 6)))
    assert far > near
