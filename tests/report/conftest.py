"""One small GEMM compiled, simulated (traced) and turned into ReportData, shared by
the report tests of this session."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.flows.helion import CompileOptions, Traced, compile_traced
from loom.flows.lowered import simulate_lowered
from loom.flows.stages import StageLog
from loom.report.model import KernelSource, ReportData, ReportInputs, build_report

SHAPE = {"M": 256, "N": 512, "K": 128}


@pytest.fixture(scope="session")
def compiled(tile_programs, wormhole):  # type: ignore[no-untyped-def]
    program = tile_programs["gemm"]
    traced = Traced("gemm", SHAPE, program, 2 * 256 * 512 * 128)
    result = compile_traced(traced, CompileOptions(arch=wormhole, shape=SHAPE, jobs=1))
    return traced, result, simulate_lowered(result.lowered, wormhole, StageLog(), trace=True)


@pytest.fixture(scope="session")
def report(compiled, wormhole) -> ReportData:  # type: ignore[no-untyped-def]
    traced, result, sim = compiled
    source = Path(__file__).parents[2] / "src" / "loom" / "kernels" / "gemm.py"
    return build_report(
        ReportInputs(
            lowered=result.lowered,
            arch=wormhole,
            source=KernelSource("src/loom/kernels/gemm.py", source.read_text()),
            flops=traced.flops,
            problem=result.problem,
            ranking=result.ranking,
            sim=sim,
            trace_file="report.trace.json",
        )
    )
