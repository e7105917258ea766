"""Several launches timed one after the other, a grid-wide barrier between each pair.

A Helion kernel whose `hl.barrier` phases read tiles other blocks wrote runs as one
launch per phase: every block of a launch, all waves, finishes its DRAM writes before
any block of the next one starts. The sequence costs each launch's program launch and
kernel time, and at each boundary the grid barrier (`loom.sim.barrier`) over the cores
of both launches: the next launch starts once every core of the previous one has
signalled completion.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import replace

from loom.arch import Arch
from loom.ir.program import Program
from loom.sim.barrier import grid_barrier_cycles
from loom.sim.params import from_arch
from loom.sim.result import BytesMoved, SimResult
from loom.sim.simulate import simulate


def boundary_grid(before: tuple[int, int], after: tuple[int, int]) -> tuple[int, int]:
    """The cores a barrier between two launches spans: every core of either."""
    return (max(before[0], after[0]), max(before[1], after[1]))


def simulate_launches(
    programs: tuple[Program, ...], arch: Arch, *, trace: bool = False
) -> SimResult:
    """Time `programs` in order. The per-engine, per-link and trace details are those of
    the longest launch; cycles, bytes, flops and events cover the whole sequence."""
    results = [simulate(p, arch, trace=trace) for p in programs]
    if len(results) == 1:
        return results[0]
    params = from_arch(arch)
    barriers = sum(
        grid_barrier_cycles(params, boundary_grid(a.grid, b.grid))
        for a, b in itertools.pairwise(programs)
    )
    kernel = sum(r.kernel_cycles for r in results) + barriers
    launch = sum(r.launch_cycles for r in results)
    cycles = kernel + launch
    us = arch.cycles_to_us(cycles)
    flops = sum(r.flops for r in results)
    tflops = flops / (us * 1e6) if us > 0 else 0.0
    longest = max(results, key=lambda r: r.kernel_cycles)
    moved = BytesMoved(
        *(sum(getattr(r.bytes_moved, f) for r in results) for f in BytesMoved.__slots__)
    )
    return replace(
        longest,
        kernel=results[0].kernel,
        grid=functools.reduce(boundary_grid, (r.grid for r in results)),
        cycles=cycles,
        kernel_cycles=kernel,
        launch_cycles=launch,
        us=us,
        flops=flops,
        tflops=tflops,
        utilization=tflops / longest.peak_tflops if longest.peak_tflops else 0.0,
        bytes_moved=moved,
        events=sum(r.events for r in results),
        rate_solves=sum(r.rate_solves for r in results),
        wall_seconds=sum(r.wall_seconds for r in results),
    )
