"""Discrete-event timing simulator: a lowered Program on an Arch -> cycles, trace.

The stand-in for Tenstorrent hardware. Per core, the reader, compute and writer engines
run their streams concurrently with circular-buffer back-pressure; NoC and DRAM
transfers share links, ports and banks as max-min fair fluid flows; compute costs come
from the architecture description. It never imports the latency model (loom.model).

    result = simulate(program, load_arch("wormhole_n150"), trace=True)
    print(result.summary()); text = trace_json(result.trace_events)
"""

from loom.sim.barrier import grid_barrier_cycles
from loom.sim.launches import boundary_grid, simulate_launches
from loom.sim.params import SimParams, from_arch
from loom.sim.primitives import Copy, run_copies
from loom.sim.result import BytesMoved, CoreBusy, EngineBusy, LinkUse, SimResult
from loom.sim.simulate import SimOptions, simulate
from loom.sim.trace import trace_json

__all__ = [
    "BytesMoved",
    "Copy",
    "CoreBusy",
    "EngineBusy",
    "LinkUse",
    "SimOptions",
    "SimParams",
    "SimResult",
    "boundary_grid",
    "from_arch",
    "grid_barrier_cycles",
    "run_copies",
    "simulate",
    "simulate_launches",
    "trace_json",
]
