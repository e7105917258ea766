"""Grid barrier: the time a global-semaphore barrier over a core grid takes.

The CUDA path separates launches that touch persistent data (RAW before remote reads,
WAR before owner updates) by a grid-wide semaphore barrier, as the annotation-driven
compiler does. Protocol (TT-Metal's global semaphore): every core posts one semaphore
increment to the coordinator, core (0, 0), on NoC0; the coordinator's NIU applies the
increments one at a time; once the count is complete the coordinator multicasts the
release flag to the grid on NoC0. Latencies are the simulator's own handshake steps
over the routed hop counts (`SimParams.handshake_latency`, as a pipe's), so the barrier
is costed from the architecture description and nothing else.
"""

from __future__ import annotations

from loom.sim.params import SimParams
from loom.sim.topology import Topology


def grid_barrier_cycles(params: SimParams, grid: tuple[int, int]) -> float:
    """Cycles from the last core reaching the barrier to the last core leaving it."""
    gy, gx = grid
    if gy * gx <= 1:
        return 0.0
    topo = Topology(params)
    root = topo.core_xy((0, 0))
    cores = [(y, x) for y in range(gy) for x in range(gx) if (y, x) != (0, 0)]
    arrive = sorted(params.handshake_latency(topo.hops(0, topo.core_xy(c), root)) for c in cores)
    done = 0.0
    for t in arrive:  # the coordinator's NIU applies one increment at a time
        done = max(done + params.niu_cycles, t)
    far = max(topo.hops(0, root, topo.core_xy(c)) for c in cores)
    return done + params.semaphore_cycles + params.handshake_latency(far)
