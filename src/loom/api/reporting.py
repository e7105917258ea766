"""What a compile's report shows, built one way for the CLI and for `loom.compile`'s
CompiledKernel: the kernel's source as the user knows it, the compile result and, when
there are some, the simulation and the tt-lang-sim verdict."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loom.flows.cached import LazyKernel
from loom.report.model import KernelSource, ReportData, ReportInputs, build_report

if TYPE_CHECKING:
    from loom.arch import Arch
    from loom.backends.ttlang import VerifyResult
    from loom.flows.helion import CompileResult
    from loom.sim import SimResult


def kernel_source(lazy: LazyKernel) -> KernelSource:
    """The kernel's source as the report shows it: its path below the working folder
    where it lies there, else as the user named it (nothing when it cannot be found)."""
    path = lazy.source_file.path
    if not lazy.source_file.text:
        return KernelSource("", "")
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
            flops=result.lowered.flops(lazy.flops),
            problem=result.problem,
            ranking=result.ranking,
            sim=sim,
            verify=verify,
            trace_file=trace_file,
            simulated_top_k=simulated_top_k,
        )
    )
