"""The Helion pipeline: the one place that knows the order of its stages.

    frontend      Helion kernel + shapes      -> TileProgram          (00_frontend.mlir)
    dataflow      TileProgram                 -> BufferedProgram      (01_dataflow, 02_buffers)
    mapping       BufferedProgram x Arch      -> [Candidate]          (03_mapping .. 05_multicast)
    model         Candidate x Arch            -> Problem              (06_problems)
    solve         [Problem]                   -> [Solution], ranked   (07_solver.log)
    materialize   best Solution               -> Schedule             (schedule.json)
    lower         Schedule                    -> Program              (loom.flows.lowered)
    backends      Program                     -> TT-Lang, run on tt-lang-sim (kernel_ttlang.py)
    sim           Program x Arch              -> simulated timing

Each stage is a pure function of the previous stage's value; this module times them and
collects the artifacts that `--dump-dir` writes (only the CLI writes files).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom.arch import Arch
from loom.dataflow import build_buffers
from loom.dataflow.looped_rows import LoopedRows, loop_rows
from loom.errors import InfeasibleError, ScheduleError
from loom.flows.lowered import Lowered, kernel_flops, lower_schedule
from loom.flows.refine import Refinement, refine
from loom.flows.stages import StageLog
from loom.ir.buffers import ACCUMULATE_POLICIES, BufferedProgram
from loom.ir.candidate import CandidateSet
from loom.ir.flops import count_flops
from loom.ir.printer import print_tile_program
from loom.ir.problem import Problem
from loom.ir.schedule import REALIZATION_NOTE, Schedule
from loom.ir.tile import TileProgram
from loom.lower import lower
from loom.mapping import enumerate_candidates
from loom.model.inputs import ProblemCache
from loom.model.inputs import compulsory_bytes as _compulsory_bytes
from loom.model.inputs import count_feasible as _count_feasible
from loom.model.inputs import loop_depth as _loop_depth
from loom.sim import simulate
from loom.solve import Ranking, RankOptions, core_bound, rank
from loom.solve.materialize import CompileStats, materialize

if TYPE_CHECKING:
    from loom.kernels.registry import KernelSpec


def run_frontend(
    spec: KernelSpec, shape: dict[str, int], log: StageLog, formats: str = ""
) -> TileProgram:
    """Import the kernel and apply the user's data formats (`--dtype`, see
    loom.frontend.formats) to it."""
    from loom.frontend import check_alignment, import_kernel, kernel_location  # Helion: here
    from loom.frontend.formats import apply_formats, parse_format_spec

    with log.stage("frontend", f"tracing {spec.name} with Helion"):
        inputs = spec.example_inputs(shape)
        program = import_kernel(spec.kernel, inputs)
        check_alignment(program, shape, kernel_location(spec.kernel))
        program = apply_formats(program, parse_format_spec(formats))
    log.artifacts["00_frontend.mlir"] = print_tile_program(program)
    return program


@dataclass(frozen=True)
class CompileOptions:
    arch: Arch
    shape: dict[str, int]
    math_fidelity: str = ""
    formats: str = ""
    """The --dtype specification (e.g. ``bfp8`` or ``bf16,b=bfp4,acc=fp32``)."""
    jobs: int = 0
    top_k: int = 5
    solver: str = "cpsat"
    time_limit_s: float = 10.0
    refine: int = 0
    """Simulate the model's best `refine` schedules and keep the simulator's fastest
    (0: the model's pick stands)."""
    accumulate: str = "strict"
    """The accumulation policy (`loom.ir.buffers.ACCUMULATE_POLICIES`): ``strict`` keeps
    every accumulator in the format the kernel gives it; ``output`` also lets a matmul
    accumulator live in its output's block, in the output's format (bf16 partial sums,
    as TTNN with fp32_dest_acc_en=False): a precision relaxation, chosen by the model
    where it pays."""
    realization: str = "auto"
    """How a full-extent dim a reduction runs over (`x[tile_m, :]`) is realized
    (`REALIZATIONS`): ``auto`` compiles the persistent program and its looped
    realization (`loom.dataflow.looped_rows`) and keeps the one the model finds faster;
    ``persistent`` or ``looped`` compiles only that one."""


REALIZATIONS = ("auto", "persistent", "looped")

APART = "the store pass's loads in buffers of their own"
"""How a realization note names a looped program whose store pass loads apart."""


@dataclass
class CompileResult:
    program: TileProgram
    buffered: BufferedProgram
    candidates: CandidateSet
    ranking: Ranking
    schedule: Schedule
    problem: Problem
    arch: Arch
    log: StageLog
    lowered: Lowered
    refinement: Refinement | None = None
    then: CompileResult | None = None
    """The next launch's compilation (`TileProgram.after`), each launch scheduled on its
    own."""


@dataclass(frozen=True)
class Traced:
    """A kernel traced to its TileProgram at one shape: what the trace cache stores, so
    that a warm compile needs neither Helion nor torch."""

    name: str
    shape: dict[str, int]
    program: TileProgram
    """After the user's data formats were applied."""
    flops: int
    """The kernel's floating-point work (`loom.flows.lowered.kernel_flops`)."""
    formats_label: str = ""
    """The Schedule's `formats` field for the `--dtype` the program was traced with."""


def trace_kernel(
    spec: KernelSpec, shape: dict[str, int], log: StageLog, formats: str = ""
) -> Traced:
    from loom.frontend.formats import parse_format_spec

    program = run_frontend(spec, shape, log, formats)
    flops = kernel_flops(spec.flops, shape, (program,))
    label = parse_format_spec(formats).label()
    return Traced(spec.name, dict(shape), program, flops, label)


def compile_kernel(spec: KernelSpec, options: CompileOptions) -> CompileResult:
    """Frontend -> dataflow -> mapping -> model -> solve -> materialize."""
    log = StageLog()
    return compile_traced(trace_kernel(spec, options.shape, log, options.formats), options, log)


def compile_traced(
    traced: Traced, options: CompileOptions, log: StageLog | None = None
) -> CompileResult:
    """Dataflow -> mapping -> model -> solve -> materialize, from a traced kernel."""
    log = log if log is not None else StageLog()
    start = time.perf_counter() - log.seconds.get("frontend", 0.0)
    arch, shape = options.arch, options.shape
    fidelity = options.math_fidelity or arch.matmul.default_fidelity
    program = traced.program
    then = None
    if program.after is not None:  # the later launches first: one program per call below
        after = program.after
        # each launch's own work (a figure the file states covers them all)
        later = dataclasses.replace(
            traced, name=after.name, program=after, flops=count_flops(after).total
        )
        then = compile_traced(later, options, StageLog(listener=log.listener))
        program = dataclasses.replace(program, after=None)
        traced = dataclasses.replace(traced, program=program, flops=count_flops(program).total)
    log.artifacts.setdefault("00_frontend.mlir", print_tile_program(program))
    _check_options(options)
    solved = [
        (s, looped, apart)
        for p, looped in _realizations(program, options, log)
        for apart in ((False, True) if looped is not None else (False,))
        if (s := _solve(p, traced.flops, fidelity, options, log, apart)) is not None
    ]
    picked = min(solved, key=_best_cycles)
    (program, buffered, candidates, ranking), looped, apart = picked
    if not ranking.top:
        raise InfeasibleError(_infeasible_message(program, arch, ranking))
    stats = CompileStats(
        kernel=traced.name,
        arch=arch.name,
        shape=dict(shape),
        dtype=program.args[0].dtype,
        math_fidelity=fidelity,
        candidates_total=candidates.candidates_total,
        candidates_after_pruning=len(candidates.candidates),
        candidates_feasible=_count_feasible(buffered, candidates, arch),
        compile_seconds=time.perf_counter() - start,
    )
    refinement = None
    if options.refine > 0:
        refinement = log.timed(
            "refine", lambda: refine(program, buffered, ranking, stats, arch, options.refine)
        )
    best_solution, best_problem = ranking.top[refinement.chosen if refinement else 0]
    schedule = log.timed(
        "materialize", lambda: materialize(best_problem, best_solution, ranking.top, stats, arch)
    )
    schedule = dataclasses.replace(
        schedule, formats=traced.formats_label, buffering="apart" if apart else ""
    )
    if len(solved) > 1 or looped is not None:
        note = _realization_note(solved, picked, schedule)
        schedule = dataclasses.replace(
            schedule,
            realization="looped" if looped is not None else "",
            notes=(*schedule.notes, f"{REALIZATION_NOTE}{note}"),
        )
    lowered = lower_schedule(program, buffered, schedule, arch, log)
    if then is not None:
        lowered.then = then.lowered
        for name, text in then.log.artifacts.items():
            log.artifacts[f"{then.program.name}.{name}"] = text  # a flat folder
        for stage, spent in then.log.seconds.items():
            log.seconds[stage] = log.seconds.get(stage, 0.0) + spent
    return CompileResult(
        program,
        buffered,
        candidates,
        ranking,
        schedule,
        best_problem,
        arch,
        log,
        lowered,
        refinement,
        then,
    )


Solved = tuple[TileProgram, BufferedProgram, CandidateSet, Ranking]


def _realizations(
    program: TileProgram, options: CompileOptions, log: StageLog
) -> list[tuple[TileProgram, LoopedRows | None]]:
    """The programs to compile: the persistent one as traced and, where it has a
    full-extent reduction dim, its looped realization (as `options.realization` asks)."""
    if options.realization == "persistent":
        return [(program, None)]
    looped = loop_rows(program)
    if looped is None:
        if options.realization == "looped":
            raise ScheduleError(
                f"kernel {program.name} has no full-extent dim a reduction runs over "
                "(`x[tile_m, :]` reduced along dim 1) that Loom can loop, so --realization "
                "looped does not apply; use auto or persistent."
            )
        return [(program, None)]
    log.artifacts["00_looped.mlir"] = print_tile_program(looped.program)
    if options.realization == "looped":
        return [(looped.program, looped)]
    return [(program, None), (looped.program, looped)]


Realized = tuple[Solved, LoopedRows | None, bool]
"""One realization's ranked candidates, its looped rows (None: the program as written)
and whether its store pass loads apart (`build_buffers`)."""


def _realization_note(solved: list[Realized], picked: Realized, schedule: Schedule) -> str:
    """Which realization runs, its chunk size in source terms, and what the others were
    modeled at (or why none of their schedules is legal)."""
    _, rows, apart = picked
    if rows is not None:
        text = rows.describe(schedule.block_sizes.get(rows.tile.name))
        text += f", {APART}" if apart else ""
    else:
        text = "persistent: the kernel as written (the whole row in L1)"
    for entry in solved:
        (_, _, _, ranking), looped, loads_apart = entry
        if entry is picked:
            continue
        other = "the looped one" if looped is not None else "the persistent one"
        other += f" {APART}" if loads_apart else ""
        if ranking.top:
            text += f"; {other} was modeled at {ranking.top[0][0].cycles:,} cycles"
        else:
            reasons = sorted({s.reason for s in ranking.solutions if s.reason})
            text += f"; {other} has no legal schedule ({reasons[0] if reasons else 'none'})"
    return text


def _best_cycles(solved: Realized) -> tuple[int, int]:
    """The modeled cycles of a realization's best schedule (none: last); ties keep the
    persistent program, which comes first, and the looped one's shared buffers."""
    top = solved[0][3].top
    return (0, top[0][0].cycles) if top else (1, 0)


def _check_options(options: CompileOptions) -> None:
    if options.refine < 0:
        raise ScheduleError(f"--refine must be >= 0 (got {options.refine}); fix the option.")
    if options.accumulate not in ACCUMULATE_POLICIES:
        raise ScheduleError(
            f"--accumulate must be one of {', '.join(ACCUMULATE_POLICIES)} "
            f"(got {options.accumulate!r}); fix the option."
        )
    if options.realization not in REALIZATIONS:
        raise ScheduleError(
            f"--realization must be one of {', '.join(REALIZATIONS)} "
            f"(got {options.realization!r}); fix the option."
        )


def _solve(
    program: TileProgram,
    flops: int,
    fidelity: str,
    options: CompileOptions,
    log: StageLog,
    apart: bool = False,
) -> Solved | None:
    """Dataflow -> mapping -> model -> solve: one realization's ranked candidates. With
    `apart`, those of its buffer plan whose store pass loads apart, None when that plan
    is the shared one (`build_buffers`): a second block of a tensor in L1 is worth it
    where the two passes' loads then stream on two engines, which the model weighs."""
    arch = options.arch
    buffered = log.timed("dataflow", lambda: build_buffers(program, options.accumulate, apart))
    if apart and buffered.allocations == build_buffers(program, options.accumulate).allocations:
        return None
    candidates = log.timed("mapping", lambda: enumerate_candidates(buffered, arch))
    dram_bytes = _compulsory_bytes(program, arch)
    depth = _loop_depth(program)
    bounds = {
        c.name: core_bound(c, arch, fidelity, flops, dram_bytes, depth)
        for c in candidates.candidates
    }
    rank_options = RankOptions(
        top_k=max(options.top_k, options.refine),
        jobs=options.jobs or os.cpu_count() or 1,
        solver=options.solver,
        deterministic_seconds=options.time_limit_s,
    )
    problems = ProblemCache(buffered, arch, fidelity, flops)
    ranking = log.timed(
        "model+solve",
        lambda: rank(candidates.candidates, bounds, problems.build, rank_options),
        f"solving {len(candidates.candidates)} candidates",
    )
    return program, buffered, candidates, ranking


def _infeasible_message(program: TileProgram, arch: Arch, ranking: Ranking) -> str:
    reasons: dict[str, int] = {}
    for s in ranking.solutions:
        if s.reason:
            reasons[s.reason] = reasons.get(s.reason, 0) + 1
    common = sorted(reasons.items(), key=lambda kv: -kv[1])[:2]
    why = "; ".join(f"{r} ({n} candidates)" for r, n in common) or "no candidate"
    return (
        f"no schedule of {program.name} fits {arch.name}: {why}. Use a larger "
        "architecture description (e.g. more usable L1) or a smaller shape."
    )


def load_schedule(spec: KernelSpec, schedule: Schedule, arch: Arch, log: StageLog) -> Lowered:
    """Lower a given (e.g. hand-written) schedule of `spec`."""
    if schedule.arch != arch.name:
        raise ScheduleError(
            f"the schedule targets {schedule.arch!r} but --arch is {arch.name!r}; pass "
            f"--arch {schedule.arch} (or the YAML file of that architecture)."
        )
    if schedule.kernel != spec.name:
        raise ScheduleError(
            f"the schedule is for kernel {schedule.kernel!r}, not {spec.name!r}; pass the "
            "kernel it was compiled for (or compile this kernel)."
        )
    if set(schedule.shape) != set(spec.shape_keys):
        raise ScheduleError(
            f"the schedule's shape has keys {', '.join(sorted(schedule.shape))}, but kernel "
            f"{spec.name} takes {', '.join(spec.shape_keys)}; fix `shape` in the schedule."
        )
    program = run_frontend(spec, schedule.shape, log, schedule.formats)
    if program.after is not None:
        raise ScheduleError(
            f"kernel {spec.name} runs as {len(program.launches())} launches (its hl.barrier "
            "phases read tiles other blocks wrote), each with its own schedule, and a "
            "schedule file holds one; compile the kernel instead of passing --schedule."
        )
    if schedule.realization == "looped":
        looped = loop_rows(program)
        if looped is None:
            raise ScheduleError(
                f"the schedule is for the looped realization, but kernel {spec.name} has no "
                "full-extent reduction dim Loom can loop; drop `realization` from the "
                "schedule (or compile the kernel)."
            )
        program = looped.program
    # the schedule file records its accumulators' placements: one in the output's format
    # is the explicit choice of the output accumulation policy
    policy = "output" if "output" in schedule.accumulators.values() else "strict"
    apart = schedule.buffering == "apart"
    buffered = log.timed("dataflow", lambda: build_buffers(program, policy, apart))
    return lower_schedule(program, buffered, schedule, arch, log)


def simulate_top_k(result: CompileResult, log: StageLog) -> tuple[tuple[str, float], ...]:
    """Simulate every top-k candidate through the same lowering: the simulator's verdict
    on the model's ranking, shown next to the modeled times in reports."""
    s = result.schedule
    stats = CompileStats(
        kernel=s.kernel,
        arch=s.arch,
        shape=dict(s.shape),
        dtype=s.dtype,
        math_fidelity=s.math_fidelity,
        candidates_total=s.candidates_total,
        candidates_after_pruning=s.candidates_after_pruning,
        candidates_feasible=s.candidates_feasible,
        compile_seconds=s.compile_seconds,
    )
    out: list[tuple[str, float]] = []
    top = result.ranking.top
    with log.stage("simulate top-k", f"simulating the top {len(top)} candidates"):
        for solution, problem in top:
            if solution.candidate == s.candidate:
                schedule = s
            else:
                schedule = dataclasses.replace(
                    materialize(problem, solution, top, stats, result.arch), formats=s.formats
                )
            program = lower(result.program, result.buffered, schedule, result.arch)
            out.append((solution.candidate, simulate(program, result.arch).cycles))
    return tuple(out)
