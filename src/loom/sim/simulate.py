"""simulate(): run a Program on an architecture and measure it."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.arch import Arch
from loom.errors import SimulationError
from loom.ir.program import Program
from loom.sim.buffers import CircularBuffer
from loom.sim.compute_cost import CostModel, tile_bytes
from loom.sim.engine import Process, ProcGen, Scheduler
from loom.sim.interp import STREAM_NOC, Frame, Shared, run_stream
from loom.sim.machine import Machine
from loom.sim.params import SimParams, from_arch
from loom.sim.pipes import PipeHub
from loom.sim.result import BytesMoved, CoreBusy, EngineBusy, LinkUse, SimResult
from loom.sim.streamgen import compile_stream
from loom.sim.trace import trace_events
from loom.symbolic import SymbolicError


@dataclass(frozen=True, slots=True)
class SimOptions:
    """Code-generation choices the Program does not spell out."""

    packer_l1_acc: bool = True
    """Accumulating matmuls add into L1 in the packer (no reload of the accumulator)."""
    include_launch: bool = True
    """Add the architecture's program launch cost to the total."""


def simulate(
    program: Program,
    arch: Arch,
    *,
    trace: bool = False,
    options: SimOptions | None = None,
    params: SimParams | None = None,
    watch: Watch | None = None,
) -> SimResult:
    """Time `program` on `arch`; raise SimulationError when it cannot finish (deadlock).

    `params` replaces the numbers read from `arch` (calibration studies); `trace` keeps
    per-engine intervals and per-link-group / per-bank load for a Perfetto trace; `watch`
    is called before each request of the first engine (state probes; it must not change
    the machine)."""
    t0 = time.perf_counter()
    options = options or SimOptions()
    params = params or from_arch(arch)
    _check_grid(program, arch)
    machine = Machine(params, trace=trace)
    shared = Shared(
        program=program,
        machine=machine,
        hub=PipeHub(machine, program.nets),
        costs=CostModel(arch, params, program, options.packer_l1_acc),
        tile_bytes={t.name: tile_bytes(arch, t.dtype, t.name) for t in program.tensors},
        block_bytes={b.name: b.tiles * tile_bytes(arch, b.dtype, b.name) for b in program.buffers},
        tensors={t.name: t for t in program.tensors},
    )
    procs = _spawn(program, shared, trace, watch)
    try:
        with _collector_paused():
            machine.sched.run()
    except SymbolicError as exc:
        raise SimulationError(f"the program's expressions cannot be evaluated: {exc}") from None
    stuck = [p for p in procs if p.finished is None]
    if stuck:
        raise SimulationError(deadlock_message(stuck, len(procs), machine.sched.now))
    return _result(program, arch, options, machine, shared, procs, time.perf_counter() - t0)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the event loop runs (back on after,
    if it was on). The loop allocates and frees millions of small objects, which start
    collections that walk every live object (the Program, the caller's data): up to a
    tenth of a large GEMM's simulation. Plain reference counting still frees them; the
    cycles a run leaves (its engines and frames) are bounded and collected afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_grid(program: Program, arch: Arch) -> None:
    rows, cols = program.grid
    if rows > len(arch.worker_noc_y) or cols > len(arch.worker_noc_x) or rows < 1 or cols < 1:
        raise SimulationError(
            f"program '{program.kernel}' runs on a {rows}x{cols} grid but architecture "
            f"'{arch.name}' has {arch.grid_y}x{arch.grid_x} cores; lower it for this "
            "architecture"
        )


Watch = Callable[[Scheduler, list[Process]], None]
"""A probe of the machine: called with the scheduler and every engine's process."""


def _spawn(program: Program, shared: Shared, trace: bool, watch: Watch | None) -> list[Process]:
    sched = shared.machine.sched
    procs: list[Process] = []
    rows, cols = program.grid
    # a probe reads each engine's place in its program off the interpreter's block stack
    compiled = [None if watch else compile_stream(s) for _, s in program.streams]
    for y in range(rows):
        for x in range(cols):
            cbs = {b.name: CircularBuffer(b.name, b.depth) for b in program.buffers}
            for (engine, stmts), body in zip(program.streams, compiled, strict=True):
                if not stmts:
                    continue
                frame = Frame(
                    shared, (y, x), engine, STREAM_NOC[engine], cbs, {"core_y": y, "core_x": x}
                )
                gen = body(frame) if body is not None else run_stream(frame, stmts)
                if watch is not None and not procs:
                    gen = _watched(gen, sched, procs, watch)
                proc = Process((y, x), engine, gen)
                proc.frame = frame
                frame.proc = proc
                if trace:
                    proc.intervals = []
                    proc.loops = frame.loops
                sched.spawn(proc)
                procs.append(proc)
    return procs


def _watched(gen: ProcGen, sched: Scheduler, procs: list[Process], watch: Watch) -> ProcGen:
    """`gen`'s requests, with `watch` called before each one is made."""
    value = None
    while True:
        try:
            request = gen.send(value)
        except StopIteration:
            return
        watch(sched, procs)
        value = yield request


def deadlock_message(stuck: list[Process], total: int, now: float, shown: int = 8) -> str:
    """One paragraph naming the blocked cores, engines and what each waits for."""
    parts = [f"{p.label} {p.why() or 'is blocked'}" for p in stuck[:shown]]
    more = f"; and {len(stuck) - shown} more" if len(stuck) > shown else ""
    return (
        f"deadlock: the simulation cannot advance past cycle {now:,.0f} because "
        f"{len(stuck)} of {total} engines are blocked: {'; '.join(parts)}{more}. "
        "Every Send needs a matching Receive at each core of its pipe, and every Wait a "
        "block pushed by a Reserve; check the program's pipe nets, IfCore guards and "
        "buffer depths."
    )


def _result(
    program: Program,
    arch: Arch,
    options: SimOptions,
    machine: Machine,
    shared: Shared,
    procs: list[Process],
    wall: float,
) -> SimResult:
    kernel = max((p.finished or 0.0) for p in procs) if procs else 0.0
    launch = machine.params.launch_cycles if options.include_launch else 0.0
    cycles = kernel + launch
    us = arch.cycles_to_us(cycles)
    tile = arch.tile
    flops = shared.matmul_tiles * 2 * tile.rows * tile.cols * tile.cols
    tflops = flops / (us * 1e6) if us > 0 else 0.0
    peak = arch.peak_tflops(program.math_fidelity)
    b = machine.bytes
    trace: tuple[dict[str, Any], ...] = ()
    if machine.trace:
        trace = trace_events(procs, machine.load_samples or (), machine.topo, arch.clock_ghz)
    return SimResult(
        kernel=program.kernel,
        arch=arch.name,
        grid=program.grid,
        cycles=cycles,
        kernel_cycles=kernel,
        launch_cycles=launch,
        us=us,
        flops=flops,
        tflops=tflops,
        peak_tflops=peak,
        utilization=tflops / peak if peak else 0.0,
        engine_busy=_engine_busy(procs, kernel),
        core_busy=tuple(
            CoreBusy(p.core, p.engine, p.busy / kernel if kernel else 0.0, p.finished or 0.0)
            for p in procs
        ),
        link_utilization=_links(machine, kernel),
        dram_bank_utilization=_banks(machine, kernel),
        bytes_moved=BytesMoved(
            dram_read=b.get("dram_read", 0.0),
            dram_write=b.get("dram_write", 0.0),
            noc_unicast=b.get("noc_unicast", 0.0),
            noc_multicast=b.get("noc_multicast", 0.0),
            noc_multicast_delivered=b.get("noc_multicast_delivered", 0.0),
        ),
        events=machine.sched.events,
        rate_solves=machine.net.solves,
        wall_seconds=wall,
        trace_events=trace,
    )


def _engine_busy(procs: list[Process], kernel: float) -> tuple[EngineBusy, ...]:
    out = []
    for engine in ("reader", "compute", "writer"):
        fr = [p.busy / kernel for p in procs if p.engine == engine and kernel > 0]
        if fr:
            mean = min(max(sum(fr) / len(fr), min(fr)), max(fr))  # no rounding outside
            out.append(EngineBusy(engine, min(fr), mean, max(fr)))
    return tuple(out)


def _links(machine: Machine, kernel: float) -> tuple[LinkUse, ...]:
    if kernel <= 0:
        return ()
    topo = machine.topo
    util = machine.net.carried[: topo.n_links] / (topo.capacity[: topo.n_links] * kernel)
    used = np.nonzero(util > 0)[0]
    links = [LinkUse(*topo.describe_link(int(i)), float(util[i])) for i in used]
    return tuple(sorted(links, key=lambda u: -u.utilization))


def _banks(machine: Machine, kernel: float) -> tuple[float, ...]:
    if kernel <= 0:
        return ()
    topo = machine.topo
    first = topo.n_links + topo.n_ports
    carried = machine.net.carried[first:]
    return tuple(float(c) / (topo.capacity[first + i] * kernel) for i, c in enumerate(carried))
