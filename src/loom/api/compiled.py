"""CompiledKernel: one compiled schedule that a PyTorch user can call, inspect, verify,
simulate, save and display."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.api.binding import (
    Bound,
    call_args,
    call_kernel,
    scalars,
    with_inputs,
    with_reference,
)
from loom.api.results import PipeTime, RankedCandidate, SimulationReport, activities
from loom.errors import LoomError

if TYPE_CHECKING:
    import torch

    from loom.arch import Arch
    from loom.backends.ttlang import VerifyResult
    from loom.flows.cached import LazyKernel
    from loom.flows.helion import CompileResult
    from loom.ir.program import Program
    from loom.ir.schedule import Schedule
    from loom.ir.tile import TileProgram
    from loom.report.model import ReportData


@dataclass
class Variants:
    """The compiles of one kernel at each scalar value it was called with (Loom compiles
    scalars as constants): `compile` binds and compiles it again on a call's arguments,
    through `loom.flows.cached.compile_cached` as the first compile went; `compiled`
    keeps every compile by its scalar values, so each runs once per process."""

    compile: Callable[[tuple[Any, ...]], CompiledKernel]
    compiled: dict[tuple[Any, ...], CompiledKernel] = field(default_factory=dict)


class CompiledKernel:
    """A Helion kernel compiled by Loom for one architecture and one set of shapes.

    Inspect it (`schedule`, `candidates`, `explain()`, `ttlang_source`, `program`), call it
    like the kernel (runs on tt-lang-sim, returns torch tensors), `verify()` it against
    the reference, `simulate()` its timing, `save(dir)` the stage artifacts, or show it in
    a notebook (the compact report)."""

    __slots__ = ("_bound", "_kernel", "_last_sim", "_result", "_variants")

    def __init__(
        self,
        bound: Bound,
        result: CompileResult,
        kernel: LazyKernel,
        variants: Variants | None = None,
    ) -> None:
        self._bound = bound
        self._result = result
        self._kernel = kernel
        self._last_sim: SimulationReport | None = None
        self._variants = variants
        if variants is not None:
            variants.compiled.setdefault(scalars(bound.example_args), self)

    # ----- what was compiled ---------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._bound.spec.name

    @property
    def arch(self) -> Arch:
        return self._result.arch

    @property
    def shape(self) -> dict[str, int]:
        """The named shape (`M`, `N`, `K` for the shipped GEMM; `a_0`, ... otherwise)."""
        return dict(self._result.schedule.shape)

    @property
    def schedule(self) -> Schedule:
        """The chosen schedule: mapping, block sizes, copies, pipelining, modeled time."""
        return self._result.schedule

    @property
    def program(self) -> Program:
        """The lowered per-core Program (reader, compute and writer streams)."""
        return self._result.lowered.lowered

    @property
    def tile_program(self) -> TileProgram:
        """The kernel as Loom's Tile IR, straight from the Helion frontend."""
        return self._result.program

    @property
    def ttlang_source(self) -> str:
        """The emitted TT-Lang kernel (what `save` writes as kernel_ttlang.py)."""
        return self._result.lowered.source

    @property
    def candidates(self) -> tuple[RankedCandidate, ...]:
        """Every candidate the solver saw, ranked as the solver ranks its top k: solved ones
        by modeled cycles (ties: less DRAM traffic, then name), then the rest by their
        lower bound."""
        by_name = {c.name: c for c in self._result.candidates.candidates}
        tiles = {sym.name for sym in self._result.program.tile_syms}
        order = sorted(
            self._result.ranking.solutions,
            key=lambda s: (
                not s.solved,
                s.cycles if s.solved else s.lower_bound,
                s.dram_bytes,
                s.candidate,
            ),
        )
        out = []
        for rank, s in enumerate(order, 1):
            cand = by_name[s.candidate]
            out.append(
                RankedCandidate(
                    rank=rank,
                    name=s.candidate,
                    status=s.status,
                    modeled_cycles=s.cycles if s.solved else 0,
                    lower_bound=s.lower_bound,
                    block_sizes={k: v for k, v in s.assignment.items() if k in tiles},
                    cores=cand.num_cores,
                    view=cand.mapping.label(),
                    reason=s.reason,
                )
            )
        return tuple(out)

    @property
    def default_reference(self) -> str:
        """What `verify()` compares with when given no reference, in words."""
        return self._bound.reference_source

    @property
    def stage_seconds(self) -> dict[str, float]:
        """Wall seconds per pipeline stage."""
        return dict(self._result.log.seconds)

    def explain(self) -> str:
        """Why this schedule, in sentences (those of `loom explain`), one per line."""
        from loom.report.explain_text import explain_sentences

        return "\n".join(explain_sentences(self.report_data())) + "\n"

    def report_data(self) -> ReportData:
        """What the HTML report shows about this compile (and the last simulation)."""
        from loom.api.reporting import report_data

        sim = self._last_sim.raw if self._last_sim is not None else None
        return report_data(self._kernel, self._result, sim)

    def summary(self) -> str:
        """The CLI's `loom compile` text."""
        from loom.report import summary

        return summary(self._result)

    def alternatives(self) -> tuple[CompiledKernel, ...]:
        """The solver's top-k schedules (the pick first), each lowered and ready to verify
        or simulate: how a user checks the model's ranking on the simulator."""
        from loom.flows.lowered import lower_schedule
        from loom.flows.stages import StageLog
        from loom.solve.materialize import CompileStats, materialize

        r, s = self._result, self._result.schedule
        stats = CompileStats(
            s.kernel, s.arch, dict(s.shape), s.dtype, s.math_fidelity, s.candidates_total,
            s.candidates_after_pruning, s.candidates_feasible, s.compile_seconds,
        )  # fmt: skip
        out = []
        for solution, problem in r.ranking.top:
            schedule = materialize(problem, solution, r.ranking.top, stats, r.arch)
            schedule = dataclasses.replace(schedule, formats=s.formats)
            log = StageLog(artifacts=dict(r.log.artifacts))
            lowered = lower_schedule(r.program, r.buffered, schedule, r.arch, log)
            result = dataclasses.replace(
                r, schedule=schedule, problem=problem, log=log, lowered=lowered
            )
            out.append(CompiledKernel(self._bound, result, self._kernel))
        return tuple(out)

    def _at(self, args: tuple[Any, ...]) -> CompiledKernel:
        """The compile for the scalar values of `args` (bound by `call_args`): this one,
        or another compile of the same kernel, done once (scalars are constants)."""
        key = scalars(args)
        if key == scalars(self._bound.example_args) or self._variants is None:
            return self
        variants = self._variants
        if key not in variants.compiled:
            variants.compiled[key] = variants.compile(args)
        return variants.compiled[key]

    # ----- running it ----------------------------------------------------------------------

    def __call__(self, *args: Any) -> torch.Tensor | tuple[torch.Tensor, ...]:
        """Run the TT-Lang kernel on tt-lang-sim and return its output as a torch tensor
        (the tensors must have the shapes and dtypes it was compiled for; a scalar left
        out takes its default, and another scalar value runs the kernel compiled for it,
        compiled on first use)."""
        from loom.backends.ttlang import run
        from loom.backends.ttlang.blockfloat import quantize_inputs
        from loom.kernels.checks import program_inputs

        full = call_args(self._bound, args)
        ck = self._at(full)
        inputs = program_inputs(call_kernel(ck._bound.spec, full), ck.tile_program)
        return run(ck.program, quantize_inputs(ck.program, inputs))

    def verify(
        self,
        reference: Callable[..., Any] | torch.Tensor | str | None = None,
        inputs: tuple[Any, ...] | None = None,
    ) -> VerifyResult:
        """Run on tt-lang-sim and compare with a reference, as `loom verify` does.

        `inputs` default to the kernel file's `make_inputs` (seeded), or seeded random
        tensors like the example arguments (scalars as compiled; other scalar values
        verify the kernel compiled for them). `reference` is a function of the inputs,
        the expected tensor, or `"tile-ir"` (`"tile-ir:fp64"`: Loom's own reference, the
        kernel's Tile IR evaluated in torch); by default the kernel file's `reference`,
        else Helion's interpret mode of the same kernel (Loom's Tile IR reference where
        that cannot run on the CPU). The result's `reference` says which one ran. A
        numeric mismatch gives `passed=False`; a kernel the simulator rejects raises
        VerificationError."""
        from loom.flows.lowered import verify_lowered
        from loom.flows.stages import StageLog

        spec = self._bound.spec
        if inputs is not None:
            full = call_args(self._bound, tuple(inputs))
            ck = self._at(full)
            if ck is not self:
                return ck.verify(reference, full)
            spec = with_inputs(spec, full)
        if reference is not None:
            spec = with_reference(spec, reference, self.shape)
        result = verify_lowered(spec, self._result.lowered, StageLog(), self.arch)
        return dataclasses.replace(result, source_path="")  # the folder is gone

    def simulate(self, trace: bool = True) -> SimulationReport:
        """Time the kernel on the discrete-event simulator (cycles, time, TFLOPS,
        utilization, busy time per engine, core and activity, links, DRAM banks).
        `trace=True` keeps the trace events (for `trace(path)` and `activities`). A kernel
        run as several launches (hl.barrier phases) is timed launch after launch with the
        grid barriers; its modeled pipes are those of the first launch."""
        from loom.sim import simulate_launches
        from loom.solve.explain import term_breakdown

        launches = tuple(lw.lowered for lw in self._result.lowered.launches())
        sim = simulate_launches(launches, self.arch, trace=trace)
        spec = self._bound.spec
        lowered = self._result.lowered
        env = _assignment(self._result)
        report = SimulationReport(
            raw=sim,
            modeled_cycles=round(lowered.modeled_cycles(self.arch)),
            flops=lowered.flops(spec.flops),
            activities=activities(sim.trace_events, self.arch.clock_ghz),
            modeled_pipes=tuple(
                PipeTime(node, term, cycles)
                for node, term, cycles in term_breakdown(self._result.problem, env)
            ),
            arch=self.arch,
            modeled_dram_bytes=lowered.modeled_dram_bytes(),
        )
        self._last_sim = report
        return report

    # ----- saving and showing --------------------------------------------------------------

    def artifacts(self) -> dict[str, str]:
        """Every stage's artifact by file name (what `loom compile --dump-dir` writes)."""
        from loom.report import compile_artifacts

        return compile_artifacts(self._result)

    def save(self, directory: str | Path, overwrite: bool = False) -> Path:
        """Write the stage artifacts into `directory` (created; it must be empty or absent
        unless `overwrite`). Files are staged beside it and moved in at the end, so a
        failure leaves nothing half-written."""
        target = Path(directory)
        if target.exists() and (not target.is_dir() or any(target.iterdir())) and not overwrite:
            raise LoomError(
                f"{str(target)!r} already exists and is not an empty folder; pick a new "
                "folder or pass overwrite=True to replace its Loom artifacts."
            )
        artifacts = self.artifacts()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
            try:
                for name, text in artifacts.items():
                    (staging / name).write_text(text)
                target.mkdir(exist_ok=True)
                for name in artifacts:
                    (staging / name).replace(target / name)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        except OSError as err:
            raise LoomError(
                f"cannot write the artifacts to {str(target)!r}: {err.strerror}; pick a "
                "writable folder."
            ) from None
        return target

    def _repr_html_(self) -> str:
        from loom.report.html import render_compact

        return render_compact(self.report_data())

    def __repr__(self) -> str:
        s = self.schedule
        shape = ",".join(f"{k}={v}" for k, v in s.shape.items())
        return (
            f"<CompiledKernel {s.kernel} [{shape}] on {s.arch}: {s.candidate}, "
            f"{s.mapping.num_cores} cores, {s.modeled_cycles:,} modeled cycles>"
        )


def _assignment(result: CompileResult) -> dict[str, int]:
    """The solver's full assignment (block sizes and pipeline knobs) of the schedule."""
    for solution, _ in result.ranking.top:
        if solution.candidate == result.schedule.candidate:
            return dict(solution.assignment)
    return dict(result.schedule.block_sizes)
