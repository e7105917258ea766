"""What the CLI does around the pipeline: compile through the trace cache, and turn
results into a report (HTML page, sentences). Helion and torch are imported only when a
kernel must be traced or run, never on a warm compile."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.pipeline import (
    CompileOptions,
    CompileResult,
    StageListener,
    StageLog,
    Traced,
    compile_traced,
    trace_kernel,
)
from loom.report.model import KernelSource, ReportData, ReportInputs, build_report
from loom.tracecache import KernelFile, TraceCache, cache_key, compile_key, kernel_file

if TYPE_CHECKING:
    from loom.arch import Arch
    from loom.backends.ttlang import VerifyResult
    from loom.kernels.registry import KernelSpec
    from loom.sim import SimResult


@dataclass
class LazyKernel:
    """A kernel whose Helion module is imported only when something needs it (tracing,
    inputs and reference for tt-lang-sim); until then it answers from the traced data."""

    source_file: KernelFile
    traced: Traced | None = None
    listener: StageListener | None = None
    selection: tuple[str | None, tuple[str, ...], str | None] = (None, (), None)
    """--kernel NAME, --arg values and --reference, as given."""
    trace_key: str = ""
    reused: bool = False
    """The compile result came from the cache (nothing was solved in this run)."""
    _spec: KernelSpec | None = field(default=None, repr=False)

    def spec(self) -> KernelSpec:
        if self._spec is None:
            from loom.pipeline import StageLog

            log = StageLog(listener=self.listener)
            with log.stage("import", "importing Helion and torch"):
                from loom.kernels.registry import resolve_kernel

                kernel, args, reference = self.selection
                self._spec = resolve_kernel(self.source_file.name, kernel, args, reference)
        return self._spec

    @property
    def file(self) -> Any:
        """The kernel file's description when it is not a Loom-contract kernel."""
        return self.spec().file

    @property
    def kernel(self) -> Any:
        return self.spec().kernel

    @property
    def example_inputs(self) -> Callable[[dict[str, int]], tuple[Any, ...]]:
        return self.spec().example_inputs

    @property
    def name(self) -> str:
        return self.traced.name if self.traced else self.spec().name

    def flops(self, shape: dict[str, int]) -> int:
        if self.traced is not None and shape == self.traced.shape:
            return self.traced.flops
        f = self.spec().flops
        return f(shape) if f else 0

    @property
    def make_inputs(self) -> Callable[[dict[str, int]], tuple[Any, ...]]:
        return self.spec().make_inputs

    @property
    def reference(self) -> Callable[..., Any]:
        return self.spec().reference


def trace_cached(
    kernel: str,
    shape_text: str | None,
    cache: TraceCache | None,
    log: StageLog,
    formats: str = "",
    selection: tuple[str | None, tuple[str, ...], str | None] = (None, (), None),
) -> LazyKernel:
    """`kernel` traced at `shape_text` with the data formats `formats` (`--dtype`), from
    `cache` when it holds it (then without importing Helion or torch), else traced now
    and stored."""
    lazy = LazyKernel(kernel_file(kernel), listener=log.listener, selection=selection)
    picked = f"{selection[0] or ''};{','.join(selection[1])};{selection[2] or ''}"
    key = cache_key(lazy.source_file, f"{shape_text or ''};{picked}", formats)
    traced = cache.load(key) if cache is not None else None
    if traced is None:
        spec = lazy.spec()
        from loom.kernels.registry import parse_shape

        traced = trace_kernel(spec, parse_shape(shape_text, spec), log, formats)
        if cache is not None:
            cache.store(key, traced)
    lazy.traced = traced
    lazy.trace_key = key
    return lazy


def compile_cached(
    kernel: str,
    shape_text: str | None,
    make_options: Callable[[dict[str, int]], CompileOptions],
    cache: TraceCache | None,
    listener: StageListener | None,
    formats: str = "",
    selection: tuple[str | None, tuple[str, ...], str | None] = (None, (), None),
) -> tuple[LazyKernel, CompileResult]:
    """Compile `kernel`, reusing its traced Tile IR from `cache` when there is one, and
    the whole compile result when this very compile was done before (see tracecache)."""
    log = StageLog(listener=listener)
    lazy = trace_cached(kernel, shape_text, cache, log, formats, selection)
    assert lazy.traced is not None
    options = make_options(lazy.traced.shape)
    if cache is None:
        return lazy, compile_traced(lazy.traced, options, log)
    key = compile_key(lazy.trace_key, options)
    with log.stage("cache", "reading the cached compile result"):
        stored = cache.load(key, CompileResult)
    if stored is not None:
        lazy.reused = True
        seconds = {**stored.log.seconds, **log.seconds}
        kept = StageLog(seconds, dict(stored.log.artifacts), listener)
        return lazy, dataclasses.replace(stored, log=kept)
    result = compile_traced(lazy.traced, options, log)
    stored_log = StageLog(dict(log.seconds), dict(log.artifacts))  # no listener: picklable
    cache.store(key, dataclasses.replace(result, log=stored_log))
    return lazy, result


def kernel_source(lazy: LazyKernel) -> KernelSource:
    path = lazy.source_file.path
    try:
        shown = path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = path.name if lazy.source_file.name != str(path) else str(path)
    return KernelSource(shown, lazy.source_file.text)


def report_data(
    lazy: LazyKernel,
    result: CompileResult,
    sim: SimResult | None = None,
    verify: VerifyResult | None = None,
    trace_file: str = "",
    simulated_top_k: tuple[tuple[str, float], ...] = (),
) -> ReportData:
    arch: Arch = result.arch
    return build_report(
        ReportInputs(
            lowered=result.lowered,
            arch=arch,
            source=kernel_source(lazy),
            flops=lazy.flops(result.schedule.shape),
            problem=result.problem,
            ranking=result.ranking,
            sim=sim,
            verify=verify,
            trace_file=trace_file,
            simulated_top_k=simulated_top_k,
        )
    )
