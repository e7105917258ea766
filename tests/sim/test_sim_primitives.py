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
        max(params.write_issue_cycles, 32 / params.size_bandwidth(32)), rel=0.1
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


def test_a_write_waits_for_its_acknowledgement_around_the_rings(params: SimParams) -> None:
    """The acknowledgement returns on the writer's NoC, whose rings run one way: a write
    to another row and column goes once around both rings however near or far its
    receiver, one along a column once around the column's ring (the semaphore write
    the base latency is derived from), and the two differ by the row ring's hops."""

    def barrier(peer: tuple[int, int]) -> float:
        return _cycles(params, Copy("write", (0, 0), 64, 1, peer=peer))

    gx, _ = params.noc_grid
    column, near, far = barrier((1, 0)), barrier((1, 1)), barrier((6, 6))
    wire = column - params.semaphore_cycles  # issue and bytes, the same for all three
    assert 0 < wire < params.write_issue_cycles + 64 / params.size_bandwidth(64) + 1e-9
    assert near == pytest.approx(far, rel=1e-12)
    assert near - column == pytest.approx(gx * params.hop_cycles, rel=1e-12)


def _whole_grid(params: SimParams, kind: str, size: int, count: int, noc: int) -> float:
    """Bytes per cycle when every core of an 8x8 grid copies interleaved pages at once."""
    n_banks = len(params.bank_noc_xy)
    grid = [(y, x) for y in range(8) for x in range(8)]
    engines = [
        [Copy(kind, core, size, count, noc=noc, first_bank=i % n_banks)]
        for i, core in enumerate(grid)
    ]
    return size * count * len(grid) / max(run_copies(params, engines))


def test_small_requests_hold_a_bank_for_its_request_time(params: SimParams) -> None:
    """64 B reads from every core: each bank serves one request per read_request_cycles."""
    rate = _whole_grid(params, "dram_read", 64, 64, noc=0)
    bound = len(params.bank_noc_xy) * 64 / params.dram_read_request_cycles
    assert rate <= bound * (1 + 1e-9)
    assert rate > 0.8 * bound


def test_interleaved_writes_reach_only_the_banks_write_rate(params: SimParams) -> None:
    """Writes on NoC1 take the reverse links of reads on NoC0: the banks' write rate
    (a fraction of their read rate) bounds them, not the links."""
    writes = _whole_grid(params, "dram_write", 8192, 16, noc=1)
    bank_rate = len(params.bank_noc_xy) * params.bank_bytes_per_cycle
    assert writes <= bank_rate * params.dram_write_efficiency * (1 + 1e-9)


def test_one_engine_writes_one_bank_at_the_read_rate(params: SimParams) -> None:
    write = Copy("dram_write", (0, 0), 8192, 64, one_bank=True)
    read = Copy("dram_read", (0, 0), 8192, 64, one_bank=True)
    assert _cycles(params, write) == pytest.approx(
        _cycles(params, read) - params.dram_read_latency_cycles + params.dram_write_latency_cycles
    )


def test_engines_start_at_their_offsets(params: SimParams) -> None:
    c = Copy("write", (0, 0), 64, 1, peer=(1, 1))
    alone = _cycles(params, c)
    assert run_copies(params, [[c]], [500.0])[0] == pytest.approx(500.0 + alone)
