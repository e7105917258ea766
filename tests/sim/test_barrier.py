"""Grid barrier: costed from the simulator's own NoC write latencies."""

from __future__ import annotations

from loom.arch import load_arch
from loom.sim import from_arch, grid_barrier_cycles


def test_a_grid_barrier_grows_with_the_grid_and_needs_two_semaphore_trips() -> None:
    params = from_arch(load_arch("blackhole_p150_13x10"))
    assert grid_barrier_cycles(params, (1, 1)) == 0.0
    small = grid_barrier_cycles(params, (1, 2))
    mid = grid_barrier_cycles(params, (4, 4))
    full = grid_barrier_cycles(params, (10, 13))
    assert small < mid < full
    # arrival, one semaphore turn, release: at least two one-hop writes and a semaphore
    assert small >= 2 * params.handshake_latency(1) + params.semaphore_cycles
    # the coordinator's NIU applies the 129 increments one at a time
    assert full >= 129 * params.niu_cycles
