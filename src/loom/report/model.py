"""ReportData: everything a report page shows about one compile, as frozen data.

Built once from the pipeline's results (compile, optional tt-lang-sim verification,
optional simulation); the HTML page, the compact notebook view and `loom explain` all
read this one value, so they cannot disagree. Nothing here knows HTML or plotting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loom.arch import Arch
from loom.backends.ttlang import VerifyResult
from loom.flows.lowered import Lowered
from loom.ir.problem import Problem
from loom.ir.program import Program
from loom.ir.schedule import Schedule
from loom.model.inputs import compulsory_bytes
from loom.model.roofline import RooflineBound, roofline_bound
from loom.report.heg_view import KNOB_TEXT, HegItem, heg_view
from loom.report.mesh_view import MeshView, mesh_view
from loom.report.summary import intensity_text
from loom.sim import SimResult
from loom.solve import Ranking


@dataclass(frozen=True, slots=True)
class SourceToken:
    text: str
    value: int | None = None
    """The chosen block size when `text` is a tile symbol, else None."""


@dataclass(frozen=True, slots=True)
class SourceLine:
    number: int
    tokens: tuple[SourceToken, ...]


@dataclass(frozen=True, slots=True)
class KernelSource:
    """The kernel's Python source as given by the user (path for display only)."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class L1Row:
    buffer: str
    role: str
    dtype: str
    tiles: int
    depth: int
    bytes: int


@dataclass(frozen=True, slots=True)
class CandidateRow:
    rank: int
    name: str
    block_sizes: tuple[tuple[str, int], ...]
    pipeline: str
    modeled_cycles: int
    modeled_us: float
    simulated_cycles: float | None
    """Simulated on the same lowering and simulator; None when not simulated."""


@dataclass(frozen=True, slots=True)
class LaunchRow:
    """One launch of a kernel run as several (`hl.barrier` phases reading other blocks'
    tiles): each launch has its own schedule."""

    name: str
    candidate: str
    cores: int
    block_sizes: tuple[tuple[str, int], ...]
    modeled_cycles: int


@dataclass(frozen=True, slots=True)
class NeighbourRow:
    block_sizes: tuple[tuple[str, int], ...]
    modeled_cycles: int
    is_solution: bool


@dataclass(frozen=True, slots=True)
class EngineRow:
    engine: str
    min: float
    mean: float
    max: float


@dataclass(frozen=True, slots=True)
class Timeline:
    """Busy fraction per (core, engine) row in equal time bins of the simulated kernel
    (launch excluded), rows grouped by engine."""

    bin_us: float
    rows: tuple[tuple[str, tuple[float, ...]], ...]


@dataclass(frozen=True, slots=True)
class SimView:
    cycles: float
    us: float
    tflops: float
    """Useful TFLOPS of the kernel's own work."""
    utilization: float
    engines: tuple[EngineRow, ...]
    dram_read_bytes: float
    dram_write_bytes: float
    dram_gbps: float
    """The simulator's DRAM bytes (read and written) over the simulated time."""
    timeline: Timeline | None
    trace_file: str
    """File name of the Perfetto trace written beside the report, or empty."""


@dataclass(frozen=True, slots=True)
class Roofline:
    intensity: float
    """FLOPs per DRAM byte actually moved (simulated traffic when simulated, else the
    compulsory traffic of the tensors)."""
    peak_tflops: float
    dram_gbps: float
    """The roof's DRAM bandwidth: the peak at the achievable efficiency (`dram.efficiency`)."""
    modeled_tflops: float
    simulated_tflops: float | None
    bound: RooflineBound | None = None
    """The kernel's roofline on the whole chip (`loom.model.roofline`: math with the
    SFPU's work, DRAM, NoC), the bound `loom eval` measures every pick against."""
    modeled_fraction: float = 0.0
    simulated_fraction: float | None = None
    """The bound's time over the modeled / simulated kernel time (launch excluded)."""


@dataclass(frozen=True, slots=True)
class VerifyRow:
    output: str
    max_abs_error: float
    max_rel_error: float
    tolerance: float
    passed: bool


@dataclass(frozen=True, slots=True)
class ReportData:
    kernel: str
    arch: str
    arch_text: str
    shape: tuple[tuple[str, int], ...]
    dtype: str
    math_fidelity: str
    candidate: str
    cores: int
    view: str
    block_sizes: tuple[tuple[str, int], ...]
    waves: tuple[tuple[str, int], ...]
    pipeline: tuple[tuple[str, str], ...]
    """Pipe node -> overlap chosen for it, in words."""
    copies: tuple[str, ...]
    modeled_cycles: int
    modeled_us: float
    modeled_tflops: float
    peak_tflops: float
    modeled_dram_gbps: float
    """The model's DRAM bytes over the modeled time, every launch."""
    dram_peak_gbps: float
    """The architecture's DRAM peak."""
    intensity: str
    """The kernel's arithmetic intensity against the ridge point, in words."""
    bottleneck: str
    binding: tuple[str, ...]
    l1: tuple[L1Row, ...]
    l1_capacity: int
    candidates: tuple[CandidateRow, ...]
    neighbours: tuple[NeighbourRow, ...]
    neighbour_rank: int
    counts: tuple[int, int, int]
    """Legal candidates, after dominance pruning, feasible."""
    search: tuple[int, int, int]
    """Candidates solved by the solver, cut off by a lower bound, without legal block
    sizes (zeros when the ranking is not known)."""
    axis_cores: tuple[tuple[str, int], ...]
    """Cores each spread grid axis runs across."""
    l1_bytes: int
    """L1 bytes per core of the pick, as the model counts them."""
    compile_seconds: float
    source: tuple[SourceLine, ...]
    source_path: str
    mesh: MeshView
    heg: HegItem | None
    sim: SimView | None
    roofline: Roofline
    verify: tuple[VerifyRow, ...]
    launches: tuple[LaunchRow, ...]
    """Every launch, in order, when the kernel runs as several; empty for one launch (the
    rest of the page then describes the first launch)."""
    total_cycles: int
    """Modeled cycles of the whole kernel: every launch plus the grid barriers between
    them, what the simulator times; `modeled_cycles` when it is one launch."""
    realization: str = ""
    """Which realization of a full-extent row runs, in words (`Schedule.realization_note`)."""

    @property
    def barrier_cycles(self) -> int:
        """Modeled grid-barrier cycles between launches (0 for one launch)."""
        if not self.launches:
            return 0
        return self.total_cycles - sum(r.modeled_cycles for r in self.launches)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[^A-Za-z_]+")


def source_lines(text: str, block_sizes: dict[str, int]) -> tuple[SourceLine, ...]:
    """Split the source into tokens, marking every tile symbol with its chosen size."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        tokens: list[SourceToken] = []
        for match in _WORD.finditer(line):
            word = match.group(0)
            value = block_sizes.get(word)
            if value is None and tokens and tokens[-1].value is None:
                tokens[-1] = SourceToken(tokens[-1].text + word)
            else:
                tokens.append(SourceToken(word, value))
        lines.append(SourceLine(number, tuple(tokens)))
    return tuple(lines)


def l1_rows(program: Program, arch: Arch) -> tuple[L1Row, ...]:
    return tuple(
        L1Row(
            b.name,
            b.role,
            b.dtype,
            b.tiles,
            b.depth,
            b.footprint_tiles()
            * arch.tile.bytes(b.dtype if b.dtype in arch.tile.dtypes else "fp32"),
        )
        for b in program.buffers
    )


def candidate_rows(
    schedule: Schedule, arch: Arch, simulated: dict[str, float]
) -> tuple[CandidateRow, ...]:
    return tuple(
        CandidateRow(
            rank=i + 1,
            name=e.candidate,
            block_sizes=tuple(e.block_sizes.items()),
            pipeline="; ".join(
                f"{node}: b_load={k['b_load']}, b_store={k['b_store']}"
                for node, k in e.pipeline.items()
            ),
            modeled_cycles=e.modeled_cycles,
            modeled_us=round(arch.cycles_to_us(e.modeled_cycles), 3),
            simulated_cycles=simulated.get(e.candidate),
        )
        for i, e in enumerate(schedule.top_k)
    )


def neighbour_rows(schedule: Schedule) -> tuple[NeighbourRow, ...]:
    entries = schedule.neighbourhood.get("entries", [])
    rows = []
    for entry in entries:
        sizes = dict(entry["block_sizes"])
        rows.append(
            NeighbourRow(
                tuple(sizes.items()),
                int(entry["modeled_cycles"]),
                all(schedule.block_sizes.get(k) == v for k, v in sizes.items()),
            )
        )
    return tuple(rows)


def timeline(
    events: tuple[dict[str, object], ...], total_us: float, bins: int = 120
) -> Timeline | None:
    """Bin the trace's busy intervals (per core and engine) into `bins` equal slices."""
    names: dict[tuple[int, int], str] = {}
    cores: dict[int, str] = {}
    busy: dict[tuple[int, int], list[float]] = {}
    width = total_us / bins if total_us > 0 else 0.0
    if width <= 0:
        return None
    for ev in events:
        ph, pid, tid = ev.get("ph"), int(ev.get("pid", 0)), int(ev.get("tid", 0))  # type: ignore[call-overload]
        if ph == "M" and ev.get("name") == "thread_name":
            names[(pid, tid)] = str(ev["args"]["name"])  # type: ignore[index]
        elif ph == "M" and ev.get("name") == "process_name" and pid < 100_000:
            cores[pid] = str(ev["args"]["name"])  # type: ignore[index]
        elif ph == "X":
            row = busy.setdefault((pid, tid), [0.0] * bins)
            start = float(ev["ts"])  # type: ignore[arg-type]
            end = start + float(ev["dur"])  # type: ignore[arg-type]
            b = int(start / width)
            while b < bins and start < end:
                edge = (b + 1) * width
                row[b] += (min(end, edge) - start) / width
                start = edge
                b += 1
    rows = tuple(
        (
            f"{cores.get(pid, pid)} {names.get((pid, tid), tid)}",
            tuple(min(v, 1.0) for v in busy[(pid, tid)]),
        )
        for pid, tid in sorted(busy, key=lambda k: (k[1], k[0]))
    )
    return Timeline(bin_us=width, rows=rows) if rows else None


def sim_view(sim: SimResult, arch: Arch, flops: int, trace_file: str) -> SimView:
    return SimView(
        cycles=sim.cycles,
        us=sim.us,
        tflops=flops / (sim.us * 1e6) if flops and sim.us else sim.tflops,
        utilization=sim.utilization,
        engines=tuple(EngineRow(e.engine, e.min, e.mean, e.max) for e in sim.engine_busy),
        dram_read_bytes=sim.bytes_moved.dram_read,
        dram_write_bytes=sim.bytes_moved.dram_write,
        dram_gbps=arch.gbps(sim.bytes_moved.dram_read + sim.bytes_moved.dram_write, sim.cycles),
        timeline=(
            timeline(sim.trace_events, sim.us * sim.kernel_cycles / sim.cycles)
            if sim.trace_events and sim.cycles
            else None
        ),
        trace_file=trace_file,
    )


def roofline(
    schedule: Schedule,
    arch: Arch,
    flops: int,
    compulsory_bytes: int,
    sim: SimView | None,
    bound: RooflineBound | None = None,
    kernel_cycles: tuple[float, float | None] = (0.0, None),
) -> Roofline:
    """The roofline point; with `bound`, its share of the (modeled, simulated) kernel
    cycles `kernel_cycles`."""
    moved = (sim.dram_read_bytes + sim.dram_write_bytes) if sim else float(compulsory_bytes)
    modeled, simulated = kernel_cycles
    return Roofline(
        intensity=flops / moved if moved else 0.0,
        peak_tflops=arch.peak_tflops(schedule.math_fidelity, schedule.mapping.num_cores),
        dram_gbps=arch.dram.peak_bytes_per_cycle * arch.dram.efficiency * arch.clock_ghz,
        modeled_tflops=schedule.modeled_tflops,
        simulated_tflops=sim.tflops if sim else None,
        bound=bound,
        modeled_fraction=bound.fraction(modeled) if bound else 0.0,
        simulated_fraction=bound.fraction(simulated) if bound and simulated else None,
    )


def verify_rows(verify: VerifyResult | None, outputs: tuple[str, ...]) -> tuple[VerifyRow, ...]:
    """One row per output tensor that was compared with its reference (a single row for
    the one tensor compared when the check was not split by output)."""
    if verify is None:
        return ()
    if verify.outputs:
        return tuple(
            VerifyRow(c.name, c.max_abs_error, c.max_rel_error, c.tolerance, c.passed)
            for c in verify.outputs
        )
    return (
        VerifyRow(
            outputs[0] if outputs else "out",
            verify.max_abs_error,
            verify.max_rel_error,
            verify.tolerance,
            verify.passed,
        ),
    )


@dataclass(frozen=True, slots=True)
class ReportInputs:
    """What the pipeline produced for one compile (the inputs of :func:`build_report`)."""

    lowered: Lowered
    arch: Arch
    source: KernelSource
    flops: int
    problem: Problem | None = None
    ranking: Ranking | None = None
    sim: SimResult | None = None
    verify: VerifyResult | None = None
    trace_file: str = ""
    simulated_top_k: tuple[tuple[str, float], ...] = ()
    """(candidate, simulated cycles) of the top-k candidates that were simulated."""


def build_report(inputs: ReportInputs) -> ReportData:
    lw, arch = inputs.lowered, inputs.arch
    s = lw.schedule
    sim = sim_view(inputs.sim, arch, inputs.flops, inputs.trace_file) if inputs.sim else None
    simulated = dict(inputs.simulated_top_k)
    if inputs.sim is not None:
        simulated.setdefault(s.candidate, inputs.sim.cycles)
    compulsory = compulsory_bytes(lw.program, arch)
    peak = arch.peak_tflops(s.math_fidelity, s.mapping.num_cores)
    total_cycles = round(lw.modeled_cycles(arch))
    return ReportData(
        kernel=s.kernel,
        arch=s.arch,
        arch_text=f"{arch.name}: {arch.grid_x}x{arch.grid_y} cores at {arch.clock_ghz} GHz",
        shape=tuple(s.shape.items()),
        dtype=s.dtype,
        math_fidelity=s.math_fidelity,
        candidate=s.candidate,
        cores=s.mapping.num_cores,
        view=s.mapping.label(),
        block_sizes=tuple(s.block_sizes.items()),
        realization=s.realization_note,
        waves=tuple(s.waves.items()),
        pipeline=tuple(
            (node, KNOB_TEXT[(k["b_load"], k["b_store"])]) for node, k in s.pipeline.items()
        ),
        copies=tuple(
            _copy_text(c.kind, c.tensor, c.mode, c.area, c.multicast_dims) for c in s.copies
        ),
        modeled_cycles=s.modeled_cycles,
        modeled_us=s.modeled_us,
        modeled_tflops=s.modeled_tflops,
        peak_tflops=peak,
        modeled_dram_gbps=arch.gbps(lw.modeled_dram_bytes(), total_cycles),
        dram_peak_gbps=arch.dram_peak_gbps,
        intensity=intensity_text(
            inputs.flops, compulsory, arch, s.math_fidelity, s.mapping.num_cores
        ),
        bottleneck=s.bottleneck.get("text", ""),
        binding=s.binding_constraints,
        l1=l1_rows(lw.lowered, arch),
        l1_capacity=s.l1_capacity_bytes or arch.l1_usable_bytes,
        candidates=candidate_rows(s, arch, simulated),
        neighbours=neighbour_rows(s),
        neighbour_rank=int(s.neighbourhood.get("rank_of_solution", 0)),
        counts=(s.candidates_total, s.candidates_after_pruning, s.candidates_feasible),
        search=_search(inputs.ranking),
        axis_cores=tuple(
            (a, s.mapping.spatial_factor(a))
            for a in s.block_sizes
            if s.mapping.spatial_factor(a) > 1
        ),
        l1_bytes=s.l1_bytes,
        compile_seconds=s.compile_seconds,
        source=source_lines(inputs.source.text, s.block_sizes),
        source_path=inputs.source.path,
        mesh=mesh_view(s, lw.lowered, arch, inputs.sim),
        heg=heg_view(inputs.problem, s, inputs.sim) if inputs.problem else None,
        sim=sim,
        roofline=roofline(
            s,
            arch,
            inputs.flops,
            compulsory,
            sim,
            roofline_bound(lw.program, arch, s.math_fidelity),
            (total_cycles, inputs.sim.kernel_cycles if inputs.sim else None),
        ),
        verify=verify_rows(
            inputs.verify, tuple(t.name for t in lw.lowered.tensors if t.role == "output")
        ),
        launches=launch_rows(lw),
        total_cycles=total_cycles,
    )


def launch_rows(lowered: Lowered) -> tuple[LaunchRow, ...]:
    chain = lowered.launches()
    if len(chain) == 1:
        return ()
    return tuple(
        LaunchRow(
            name=x.program.name,
            candidate=x.schedule.candidate,
            cores=x.schedule.mapping.num_cores,
            block_sizes=tuple(x.schedule.block_sizes.items()),
            modeled_cycles=x.schedule.modeled_cycles,
        )
        for x in chain
    )


def _search(ranking: Ranking | None) -> tuple[int, int, int]:
    if ranking is None:
        return (0, 0, 0)
    status = [x.status for x in ranking.solutions]
    pruned, infeasible = status.count("pruned"), status.count("infeasible")
    return (len(status) - pruned - infeasible, pruned, infeasible)


def _copy_text(
    kind: str, tensor: str, mode: str, area: tuple[int, int], dims: tuple[str, ...]
) -> str:
    if mode == "unicast":
        return f"{kind} {tensor}: unicast (each core reads its own block from DRAM)"
    return f"{kind} {tensor}: {mode} to groups of {area[0]}x{area[1]} cores ({', '.join(dims)})"
