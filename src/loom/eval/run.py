"""Run one evaluation case: Loom and every applicable baseline, through one simulator.

For a (kernel, arch, shape): compile with Loom (top-5), lower and simulate each of the
five; for GEMM also simulate the solver's block-size neighbourhood of its pick (the
paper's Figure 11); then build each baseline's Schedule, lower and simulate it with the
same lowering and simulator. Everything here is deterministic (one solver worker, fixed
seeds) except the wall-clock columns.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loom.arch import Arch, load_arch
from loom.baselines.build import Policy, build_schedule
from loom.baselines.sdpa_decode_tuned import (
    MODELS_FORMATS,
    sdpa_decode_models_policy,
    sdpa_decode_tuned_candidates,
)
from loom.baselines.sdpa_program import source_program
from loom.baselines.sdpa_tuned import sdpa_models_policy, sdpa_tuned_candidates
from loom.baselines.tileloom import tileloom_candidates
from loom.baselines.ttnn_layer import (
    LAYER_BASELINES,
    layer_candidates,
    softmax_sharded_policy,
)
from loom.baselines.ttnn_matmul import oob_policy
from loom.baselines.ttnn_matmul_tuned import matmul_tuned_candidates
from loom.baselines.ttnn_sdpa import sdpa_decode_policy, sdpa_policy
from loom.dataflow import build_buffers
from loom.dataflow.looped_rows import loop_rows
from loom.errors import ScheduleError
from loom.eval.bound import compute_bound
from loom.eval.cases import EvalCase, kernel_source
from loom.eval.rows import ResultRow
from loom.eval.simcache import simulate_cached
from loom.eval.tuned import Prepared, Tuned, fastest
from loom.flows.cached import LazyKernel, compile_cached
from loom.flows.helion import CompileOptions, CompileResult, compile_kernel, run_frontend
from loom.flows.lowered import lower_schedule
from loom.flows.stages import StageLog
from loom.flows.tracecache import TraceCache
from loom.ir.buffers import BufferedProgram
from loom.ir.program import Program
from loom.ir.schedule import Schedule, grid_waves
from loom.ir.tile import TileProgram
from loom.kernels.registry import KernelSpec, resolve_kernel, source_kernel
from loom.model.roofline import RooflineBound, roofline_bound
from loom.sim import SimResult
from loom.solve.materialize import CompileStats, materialize


@dataclass(frozen=True)
class EvalOptions:
    top_k: int = 5
    math_fidelity: str = ""
    """One fidelity for every policy (default: the architecture's)."""
    neighbours: bool = True
    """Simulate GEMM's 27-point block-size neighbourhood (Figure 11)."""
    time_limit_s: float = 10.0
    cache_dir: str = ""
    """Where Loom's compiles and the simulations are kept across runs (`loom.flows.cached`,
    `loom.eval.simcache`); empty: nowhere."""


def _baselines(case: EvalCase, arch: Arch) -> list[tuple[str, Callable[[], Policy | None]]]:
    shape, grid = case.shape_dict, (arch.grid_x, arch.grid_y)
    if case.kernel == "gemm":
        return [("ttnn-matmul-oob", lambda: oob_policy(shape, arch.name, grid))]
    if case.kernel in ("flash_attention", "flash_attention_causal"):
        causal = case.kernel == "flash_attention_causal"
        noc_x = tuple(arch.worker_noc_x)
        return [
            ("ttnn-sdpa", lambda: sdpa_policy(shape, grid, causal, noc_x)),
            ("ttnn-sdpa-models", lambda: sdpa_models_policy(shape, grid, causal, noc_x)),
        ]
    if case.kernel == "flash_decode":
        return [
            ("ttnn-sdpa-decode", lambda: sdpa_decode_policy(shape, grid)),
            ("ttnn-sdpa-decode-models", lambda: sdpa_decode_models_policy(shape)),
        ]
    if case.kernel == "softmax":
        return [("ttnn-softmax-sharded", lambda: softmax_sharded_policy(shape, grid))]
    return []


def _tuned_baselines(
    case: EvalCase, arch: Arch
) -> list[tuple[str, Callable[[], tuple[Policy, ...]]]]:
    """The baselines that are the fastest of several legal configurations of TTNN's own
    knobs: each offers its candidates, `loom.eval.tuned` keeps the fastest."""
    shape, grid = case.shape_dict, (arch.grid_x, arch.grid_y)
    if case.kernel == "gemm":
        return [("ttnn-matmul-tuned", lambda: matmul_tuned_candidates(shape, arch.name, grid))]
    if case.kernel in ("flash_attention", "flash_attention_causal"):
        causal = case.kernel == "flash_attention_causal"
        noc_x, l1 = tuple(arch.worker_noc_x), arch.l1_usable_bytes
        return [("ttnn-sdpa-tuned", lambda: sdpa_tuned_candidates(shape, grid, causal, noc_x, l1))]
    if case.kernel == "flash_decode":
        l1 = arch.l1_usable_bytes
        return [("ttnn-sdpa-decode-tuned", lambda: sdpa_decode_tuned_candidates(shape, grid, l1))]
    if case.kernel in LAYER_BASELINES:  # one rule, its variants Loom's L1 plan may need
        l1s = (arch.l1_usable_bytes, arch.l1_bytes)
        return [(LAYER_BASELINES[case.kernel],
                 lambda: layer_candidates(case.kernel, shape, grid, *l1s))]  # fmt: skip
    return []


def _row(
    case: EvalCase,
    spec: KernelSpec,
    policy: str,
    rank: int,
    schedule: Schedule,
    sim: SimResult,
    sim_seconds: float,
    bound: RooflineBound,
    compile_seconds: float = 0.0,
) -> ResultRow:
    flops = spec.flops(case.shape_dict) if spec.flops else 0
    tflops = flops / (sim.us * 1e-6) / 1e12 if sim.us else 0.0
    busy = {e.engine: e.max for e in sim.engine_busy}
    return ResultRow(
        kernel=case.kernel,
        arch=case.arch,
        shape=case.shape_text,
        policy=policy,
        rank=rank,
        status="ok",
        candidate=schedule.candidate,
        block_sizes=" ".join(f"{k}={v}" for k, v in sorted(schedule.block_sizes.items())),
        cores=schedule.mapping.num_cores,
        cycles=round(sim.cycles, 1),
        us=sim.us,
        tflops=tflops,
        utilization=tflops / sim.peak_tflops if sim.peak_tflops else 0.0,
        modeled_cycles=float(schedule.modeled_cycles),
        modeled_tflops=schedule.modeled_tflops,
        compute_busy_max=busy.get("compute", 0.0),
        reader_busy_max=busy.get("reader", 0.0),
        writer_busy_max=busy.get("writer", 0.0),
        dram_read_bytes=sim.bytes_moved.dram_read,
        noc_multicast_bytes=sim.bytes_moved.noc_multicast,
        busiest_link=sim.link_utilization[0].utilization if sim.link_utilization else 0.0,
        roofline_us=bound.us,
        roofline_bound=bound.bound,
        roofline_fraction=bound.fraction(sim.kernel_cycles),
        compile_seconds=compile_seconds,
        sim_seconds=sim_seconds,
    )


def _failed(case: EvalCase, policy: str, rank: int, err: Exception) -> ResultRow:
    text = " ".join(str(err).split())[:200].replace(",", ";")
    return ResultRow(case.kernel, case.arch, case.shape_text, policy, rank, f"error: {text}")


class _Case:
    """The per-case state: kernel, arch, and the Loom compile that baselines share."""

    def __init__(self, case: EvalCase, options: EvalOptions) -> None:
        self.case = case
        self.options = options
        self.spec = resolve_kernel(kernel_source(case.kernel))
        self.arch = load_arch(case.arch)
        self.fidelity = options.math_fidelity or self.arch.matmul.default_fidelity
        self.log = StageLog()
        self._buffers: dict[tuple[str, str, str, str], BufferedProgram] = {}
        self._programs: dict[str, TileProgram] = {}
        self._sims: dict[Program, SimResult] = {}
        """Simulations of this case by lowered program (notes aside): policies, ranks and
        Figure 11's neighbours often lower to the same program, and the simulator is a
        pure function of it."""
        self._bounds: dict[int, tuple[TileProgram, RooflineBound]] = {}
        self._cache = TraceCache(Path(options.cache_dir)) if options.cache_dir else None
        """The same across cases and runs, on disk (`loom.eval.simcache`)."""

    def bound(self, program: TileProgram) -> RooflineBound:
        """The roofline of the Tile IR a row ran (its formats), once per program."""
        if id(program) not in self._bounds:
            self._bounds[id(program)] = (program, roofline_bound(program, self.arch, self.fidelity))
        return self._bounds[id(program)][1]

    def compile(self, top_k: int, formats: str = "") -> CompileResult:
        """Loom's compile of this case (through the cache folder's compile results when
        there is one: `loom.flows.cached`, keyed by every input of the compile)."""
        case, options = self.case, self.options

        def make_options(shape: dict[str, int]) -> CompileOptions:
            return CompileOptions(arch=self.arch, shape=shape, math_fidelity=self.fidelity,
                                  formats=formats, jobs=1, top_k=top_k,
                                  time_limit_s=options.time_limit_s)  # fmt: skip

        if self._cache is None:
            return compile_kernel(self.spec, make_options(case.shape_dict))
        kernel = LazyKernel.of_file(kernel_source(case.kernel), spec=self.spec)
        return compile_cached(kernel, case.shape_text, make_options, self._cache, None, formats)

    def program_for(self, policy: Policy, program: TileProgram) -> TileProgram:
        """The program a baseline runs: `program` (the kernel as Loom compiles it) unless
        the policy's source runs other tensor formats (`Policy.formats`), traced once per
        case with them, or loops otherwise (`Policy.kernel`: TTNN's causal SDPA), or names
        a realization of a row kernel (`Policy.realization`: the kernel as written, or its
        looped form), whichever Loom picked."""
        if policy.realization:
            if policy.realization not in self._programs:
                written = run_frontend(self.spec, self.case.shape_dict, self.log)
                looped = loop_rows(written)
                if policy.realization == "looped" and looped is None:
                    raise ScheduleError(f"{policy.name}: {written.name} has no looped form")
                self._programs["persistent"] = written
                if looped is not None:
                    self._programs["looped"] = looped.program
            return self._programs[policy.realization]
        if not policy.formats and not policy.kernel:
            return program
        key = f"{policy.kernel}:{policy.formats}"
        if key not in self._programs:
            spec = source_kernel(policy.kernel) if policy.kernel else self.spec
            self._programs[key] = run_frontend(spec, self.case.shape_dict, self.log, policy.formats)
        return self._programs[key]

    def buffers_for(
        self, policy: Policy, program: TileProgram, strict: BufferedProgram | None = None
    ) -> BufferedProgram:
        """The buffering of `program` (`program_for`'s) a baseline's schedule is built on,
        built once per case: `strict` (the kernel's own, when given and the policy keeps
        the kernel's formats) unless the policy keeps its matmuls' bf16 partial sums in
        the output block (TTNN's matmul policies), a placement the strict buffering does
        not offer."""
        key = (
            "output" if policy.accumulate == "output" else "strict",
            policy.formats,
            policy.realization,
            policy.kernel,
        )
        if key == ("strict", "", "", "") and strict is not None:
            return strict
        if key not in self._buffers:
            self._buffers[key] = build_buffers(program, key[0])
        return self._buffers[key]

    def lower(self, program, buffered, schedule: Schedule, policy: Policy | None) -> Program:  # type: ignore[no-untyped-def]
        """The lowered program of `schedule`; of a baseline's (`policy` given) as its
        source computes it (`sdpa_program.source_program`: TTNN's SDPA scales inside exp
        and generates its causal mask)."""
        lowered = lower_schedule(program, buffered, schedule, self.arch, self.log).lowered
        return lowered if policy is None else source_program(policy, lowered)

    def simulate(  # type: ignore[no-untyped-def]
        self, program, buffered, schedule: Schedule, policy: Policy | None = None
    ) -> tuple[SimResult, float]:
        """The simulation of `schedule` (of `policy`'s, when a baseline's) and its seconds."""
        start = time.perf_counter()
        sim = self.simulate_lowered(self.lower(program, buffered, schedule, policy))
        return sim, time.perf_counter() - start

    def simulate_lowered(self, lowered: Program) -> SimResult:
        """The simulation of `lowered`, once per case (`_sims`) and through the cache."""
        key = dataclasses.replace(lowered, notes=())
        sim = self._sims.get(key)
        if sim is None:
            sim = self._sims[key] = simulate_cached(lowered, self.arch, self._cache)
        return sim

    def tune(self, program, buffered, candidates: tuple[Policy, ...]) -> Tuned:  # type: ignore[no-untyped-def]
        """The fastest of a tuned baseline's candidates, each built on its own buffering
        (`buffered`, the kernel's, unless the policy needs another), lowered, bounded
        below and simulated unless its bound rules it out (`loom.eval.tuned`)."""
        case = self.case

        def prepare(policy: Policy) -> Prepared[Program]:
            start = time.perf_counter()
            own_program = self.program_for(policy, program)
            own = self.buffers_for(policy, own_program, buffered)
            schedule = build_schedule(own, case.arch, case.shape_dict, self.fidelity, policy)
            lowered = self.lower(own_program, own, schedule, policy)
            bound = compute_bound(lowered, self.arch)
            return Prepared(schedule, lowered, bound, time.perf_counter() - start)

        def simulate(lowered: Program) -> tuple[SimResult, float]:
            start = time.perf_counter()
            sim = self.simulate_lowered(lowered)
            return sim, time.perf_counter() - start

        return fastest(candidates, prepare, simulate)


def _loom_rows(state: _Case) -> tuple[list[ResultRow], object, object]:
    case, options = state.case, state.options
    start = time.perf_counter()
    result = state.compile(top_k=options.top_k)
    compile_seconds = time.perf_counter() - start
    stats = CompileStats(
        kernel=state.spec.name,
        arch=state.arch.name,
        shape=case.shape_dict,
        dtype=result.schedule.dtype,
        math_fidelity=state.fidelity,
        candidates_total=0,
        candidates_after_pruning=0,
        candidates_feasible=0,
        compile_seconds=0.0,
    )
    rows: list[ResultRow] = []
    for rank, (solution, problem) in enumerate(result.ranking.top, 1):
        schedule = (
            result.schedule
            if rank == 1
            else materialize(problem, solution, result.ranking.top, stats, state.arch)
        )
        try:
            sim, secs = state.simulate(result.program, result.buffered, schedule)
            rows.append(_row(case, state.spec, "loom", rank, schedule, sim, secs,
                             state.bound(result.program),
                             compile_seconds if rank == 1 else 0.0))  # fmt: skip
        except Exception as err:  # a sweep records a policy's failure and goes on
            rows.append(_failed(case, "loom", rank, err))
    if case.kernel == "gemm" and options.neighbours:
        rows.extend(_neighbour_rows(state, result.program, result.buffered, result.schedule))
    return rows, result.program, result.buffered


SAME_FORMATS = {"flash_decode": ("loom-kv-bfp8", MODELS_FORMATS)}
"""Loom compiled again with the formats a baseline's source runs (the models' bfloat8_b
KV cache), so that the baseline that reads fewer bytes meets Loom on the same data."""


def _same_format_rows(state: _Case) -> list[ResultRow]:
    """Loom's pick (rank 1) compiled with `SAME_FORMATS`' formats for this kernel."""
    if state.case.kernel not in SAME_FORMATS:
        return []
    name, formats = SAME_FORMATS[state.case.kernel]
    case = state.case
    try:
        start = time.perf_counter()
        result = state.compile(top_k=1, formats=formats)
        seconds = time.perf_counter() - start
        sim, secs = state.simulate(result.program, result.buffered, result.schedule)
        bound = state.bound(result.program)
        return [_row(case, state.spec, name, 1, result.schedule, sim, secs, bound, seconds)]
    except Exception as err:  # a sweep records a policy's failure and goes on
        return [_failed(case, name, 1, err)]


def _with_blocks(schedule: Schedule, program, blocks: dict[str, int]) -> Schedule:  # type: ignore[no-untyped-def]
    extents = {axis.tile.name: axis.extent for axis in program.grid}
    waves = grid_waves(extents, schedule.mapping, blocks)
    return dataclasses.replace(schedule, block_sizes=dict(blocks), waves=waves, modeled_cycles=0)


def _neighbour_rows(state: _Case, program, buffered, best: Schedule) -> list[ResultRow]:  # type: ignore[no-untyped-def]
    rows = []
    entries = best.neighbourhood.get("entries", [])
    for i, entry in enumerate(entries, 1):
        blocks = {**best.block_sizes, **entry["block_sizes"]}
        schedule = _with_blocks(best, program, blocks)
        schedule = dataclasses.replace(schedule, modeled_cycles=int(entry["modeled_cycles"]))
        try:
            sim, secs = state.simulate(program, buffered, schedule)
            rows.append(_row(state.case, state.spec, "loom-neighbour", i, schedule, sim, secs,
                             state.bound(program)))  # fmt: skip
        except Exception as err:  # a sweep records a policy's failure and goes on
            rows.append(_failed(state.case, "loom-neighbour", i, err))
    return rows


def baseline_program(case: EvalCase, name: str, options: EvalOptions | None = None) -> Program:
    """The lowered program `loom eval` simulates for the baseline `name` of `case` (for
    the benchmarks and tests that time or pin it)."""
    state = _Case(case, options or EvalOptions())
    program = run_frontend(state.spec, case.shape_dict, state.log)
    tuned = dict(_tuned_baselines(case, state.arch))
    if name in tuned:  # the fastest candidate's: simulates those its bound leaves
        strict = build_buffers(program)
        best = state.tune(program, strict, tuned[name]())
        own = state.program_for(best.policy, program)
        own_buffers = state.buffers_for(best.policy, own, strict)
        return state.lower(own, own_buffers, best.schedule, best.policy)
    policy = dict(_baselines(case, state.arch))[name]()
    if policy is None:
        raise ValueError(f"{name} has no schedule for {case.key}")
    program = state.program_for(policy, program)
    buffered = state.buffers_for(policy, program)
    schedule = build_schedule(buffered, case.arch, case.shape_dict, state.fidelity, policy)
    return state.lower(program, buffered, schedule, policy)


def tileloom_rows(case: EvalCase, options: EvalOptions | None = None) -> list[ResultRow]:
    """TileLoom's profiled rows of `case` alone (as `loom eval` gives them)."""
    state = _Case(case, options or EvalOptions())
    program = run_frontend(state.spec, case.shape_dict, state.log)
    return _tileloom_rows(state, program, build_buffers(program))


def _baseline_rows(state: _Case, program, buffered) -> list[ResultRow]:  # type: ignore[no-untyped-def]
    case = state.case
    rows = []
    for name, make in _baselines(case, state.arch):
        try:
            policy = make()
            if policy is None:
                continue
            own_program = state.program_for(policy, program)
            own = state.buffers_for(policy, own_program, buffered)
            schedule = build_schedule(own, case.arch, case.shape_dict, state.fidelity, policy)
            sim, secs = state.simulate(own_program, own, schedule, policy)
            rows.append(_row(case, state.spec, name, 1, schedule, sim, secs,
                             state.bound(own_program)))  # fmt: skip
        except Exception as err:  # a sweep records a policy's failure and goes on
            rows.append(_failed(case, name, 1, err))
    for name, candidates in _tuned_baselines(case, state.arch):
        try:
            best = state.tune(program, buffered, candidates())
            bound = state.bound(state.program_for(best.policy, program))
            rows.append(_row(case, state.spec, name, 1, best.schedule, best.sim, best.seconds,
                             bound))  # fmt: skip
        except Exception as err:  # a sweep records a policy's failure and goes on
            rows.append(_failed(case, name, 1, err))
    rows.extend(_tileloom_rows(state, program, buffered))
    return rows


def _tileloom_rows(state: _Case, program, buffered) -> list[ResultRow]:  # type: ignore[no-untyped-def]
    """TileLoom's top-k profiled: its ranking walked in order, a candidate the lowering
    rejects (a ScheduleError: it does not fit L1, or does not divide the shape) skipped
    as a kernel that fails to build, until `top_k` have been simulated."""
    case = state.case
    rows: list[ResultRow] = []
    start = time.perf_counter()
    ranked = tileloom_candidates(case.kernel, state.arch, case.shape_dict, state.fidelity, None)
    rank_seconds = time.perf_counter() - start
    rejected: ScheduleError | None = None
    for cand in ranked:
        rank = len(rows) + 1
        if rank > state.options.top_k:
            break
        try:
            schedule = build_schedule(buffered, case.arch, case.shape_dict, state.fidelity,
                                      cand.policy)  # fmt: skip
            schedule = dataclasses.replace(schedule, modeled_cycles=int(cand.modeled_cycles))
            sim, secs = state.simulate(program, buffered, schedule)
            rows.append(_row(case, state.spec, "tileloom", rank, schedule, sim, secs,
                             state.bound(program), rank_seconds if rank == 1 else 0.0))  # fmt: skip
        except ScheduleError as err:
            rejected = err
        except Exception as err:  # a sweep records a policy's failure and goes on
            rows.append(_failed(case, "tileloom", rank, err))
    if not rows and rejected is not None:  # none builds: say why the first rank is empty
        rows.append(_failed(case, "tileloom", 1, rejected))
    return rows


def run_case(case: EvalCase, options: EvalOptions) -> tuple[ResultRow, ...]:
    """Every row of one case. Errors in one policy become that policy's row; a Loom
    compile failure becomes Loom's row and the baselines still run."""
    state = _Case(case, options)
    try:
        rows, program, buffered = _loom_rows(state)
    except Exception as err:  # a sweep records a policy's failure and goes on
        program = run_frontend(state.spec, case.shape_dict, state.log)
        buffered = build_buffers(program)
        rows = [_failed(case, "loom", 1, err)]
    rows.extend(_same_format_rows(state))
    rows.extend(_baseline_rows(state, program, buffered))
    return tuple(rows)
