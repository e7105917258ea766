"""Reports: the readable compile summary, candidate tables, the dump-dir artifacts, and
the HTML report (`ReportData` built once from the pipeline's results, rendered as a full
page, a compact notebook view, or sentences)."""

from __future__ import annotations

from loom.flows.helion import CompileResult
from loom.model.inputs import compulsory_bytes
from loom.report.artifacts import (
    candidates_json,
    print_buffers,
    print_dataflow,
    print_heg,
    print_mapping,
    print_multicast,
    print_problem,
    print_reuse,
    solver_log,
)
from loom.report.explain_text import explain_sentences
from loom.report.html import render_compact, render_report
from loom.report.model import KernelSource, ReportData, ReportInputs, build_report
from loom.report.summary import (
    candidates_table,
    schedule_summary,
    simulation_dict,
    simulation_summary,
)


def compile_artifacts(result: CompileResult) -> dict[str, str]:
    """Every stage's artifact, named in pipeline order (for --dump-dir)."""
    from loom.solve.cpsat import model_text  # imports OR-Tools

    best = result.problem.candidate
    cs = result.candidates
    artifacts = dict(result.log.artifacts)
    artifacts.update(
        {
            "01_dataflow.mlir": print_dataflow(result.buffered),
            "02_buffers.txt": print_buffers(result.buffered),
            "03_mapping.mlir": print_mapping(cs, best),
            "04_reuse.mlir": print_reuse(cs, best),
            "05_multicast.mlir": print_multicast(best),
            "candidates.json": candidates_json(cs),
            "06_heg.txt": print_heg(result.problem.heg),
            "06_problem.txt": print_problem(result.problem),
            "07_cpsat_model.pbtxt": model_text(result.problem),
            "07_solver.log": solver_log(result.ranking.solutions),
            "schedule.json": result.schedule.to_json(),
        }
    )
    return artifacts


def summary(result: CompileResult) -> str:
    """The compiled schedule; for a kernel run as several launches (`hl.barrier` phases
    reading other blocks' tiles), each launch's, then the sequence's modeled total."""
    text = _launch_summary(result)
    later = result.then
    while later is not None:
        text += "\n-- next launch, after a grid-wide barrier (hl.barrier) --\n"
        text += _launch_summary(later)
        later = later.then
    if result.then is not None:
        chain = result.lowered.launches()
        modeled = result.lowered.modeled_cycles(result.arch)
        parts = " + ".join(f"{lw.schedule.modeled_cycles:,}" for lw in chain)
        barriers = modeled - sum(lw.schedule.modeled_cycles for lw in chain)
        text += (
            f"launches    {len(chain)} ({', '.join(lw.program.name for lw in chain)}): modeled "
            f"{parts} + grid barrier {barriers:,.0f} = {modeled:,.0f} cycles "
            f"= {result.arch.cycles_to_us(modeled):,.1f} us\n"
        )
    return text


def _launch_summary(result: CompileResult) -> str:
    statuses = [s.status for s in result.ranking.solutions]
    counts = (
        result.candidates.candidates_total,
        len(result.candidates.candidates),
        len(statuses) - statuses.count("pruned"),
        statuses.count("pruned"),
    )
    text = schedule_summary(
        result.schedule,
        result.arch,
        counts,
        result.problem.flops,
        compulsory_bytes(result.program, result.arch),
    )
    if result.refinement is not None:
        text += "\n".join(result.refinement.lines()) + "\n"
    return text


__all__ = [
    "KernelSource",
    "ReportData",
    "ReportInputs",
    "build_report",
    "candidates_table",
    "compile_artifacts",
    "explain_sentences",
    "render_compact",
    "render_report",
    "simulation_dict",
    "simulation_summary",
    "summary",
]
