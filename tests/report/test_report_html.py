"""ReportData from a small GEMM compile, and the pages rendered from it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from loom.pipeline import CompileOptions, StageLog, Traced, compile_traced, simulate_lowered
from loom.report.explain_text import explain_sentences
from loom.report.heg_view import binding_path
from loom.report.html import render_compact, render_report
from loom.report.model import KernelSource, ReportData, ReportInputs, build_report

SHAPE = {"M": 256, "N": 512, "K": 128}


@pytest.fixture(scope="module")
def report(tile_programs, wormhole) -> ReportData:  # type: ignore[no-untyped-def]
    program = tile_programs["gemm"]
    traced = Traced("gemm", SHAPE, program, 2 * 256 * 512 * 128)
    result = compile_traced(traced, CompileOptions(arch=wormhole, shape=SHAPE, jobs=1))
    sim = simulate_lowered(result.lowered, wormhole, StageLog(), trace=True)
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


def test_report_data_is_frozen(report: ReportData) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.kernel = "other"  # type: ignore[misc]


def test_source_tokens_carry_the_solved_block_sizes(report: ReportData) -> None:
    sizes = dict(report.block_sizes)
    marked = {(t.text, t.value) for line in report.source for t in line.tokens if t.value}
    assert marked == set(sizes.items())
    text = "\n".join("".join(t.text for t in line.tokens) for line in report.source)
    assert text == (Path(__file__).parents[2] / "src/loom/kernels/gemm.py").read_text().rstrip()


def test_mesh_has_every_core_and_every_pipe(report: ReportData) -> None:
    mesh = report.mesh
    assert len(mesh.cores) == 64 and len({(c.y, c.x) for c in mesh.cores}) == 64
    used = [c for c in mesh.cores if c.role != "idle"]
    assert len(used) == report.cores
    assert sum(n.pipes for n in mesh.nets) == len(mesh.regions)
    if mesh.regions:
        assert {c.role for c in used} >= {"origin", "receiver"}
    assert len(mesh.banks) == 12  # wormhole_n150's DRAM banks
    assert all(0 < c.px < mesh.width and 0 < c.py < mesh.height for c in mesh.cores)


def test_heg_binding_path_ends_at_the_bottleneck(report: ReportData) -> None:
    assert report.heg is not None
    path = binding_path(report.heg)
    assert report.heg.cycles == report.modeled_cycles
    assert path[-1].split(" [")[0] in report.bottleneck


def test_report_page_is_self_contained_and_deterministic(report: ReportData) -> None:
    page = render_report(report)
    assert page.startswith("<!DOCTYPE html>") and page == render_report(report)
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert page.count('<g class="core ') == 64
    for section in ("why", "source", "mesh", "heg", "candidates", "simulation", "verify"):
        assert f'id="{section}"' in page
    for row in report.candidates:
        assert row.name in page
    assert 'href="report.trace.json"' in page
    assert "<script>" in page and "<style>" in page


def test_compact_view_is_a_fragment(report: ReportData) -> None:
    html = render_compact(report)
    assert "<html" not in html and "<svg" in html
    assert report.candidate in html and report.bottleneck.split(" [")[0] in html


def test_explain_names_candidate_binding_and_simulation(report: ReportData) -> None:
    text = " ".join(explain_sentences(report))
    assert report.candidate in text
    assert all(b in text for b in report.binding)
    assert "simulator measured" in text
