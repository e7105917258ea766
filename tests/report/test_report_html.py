"""ReportData from a small GEMM compile, and the pages rendered from it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from loom.report.explain_text import explain_sentences
from loom.report.heg_view import binding_path
from loom.report.html import render_compact, render_report
from loom.report.model import ReportData, verify_rows


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
    assert "<html" not in html and "<svg" in html and "<script" not in html
    assert report.candidate in html and report.bottleneck.split(" [")[0] in html
    assert html.count('<g class="core ') == 64
    assert "simulated / modeled" in html and "Not simulated yet" not in html
    assert f"tile_k = {dict(report.block_sizes)['tile_k']}" in html


def test_compact_view_escapes_and_says_when_not_simulated(report: ReportData) -> None:
    odd = dataclasses.replace(report, candidate="<script>alert(1)</script>", sim=None)
    html = render_compact(odd)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "Not simulated yet" in html and "simulated / modeled" not in html


def test_explain_names_candidate_binding_and_simulation(report: ReportData) -> None:
    sentences = explain_sentences(report)
    text = " ".join(sentences)
    assert report.candidate in text and "wormhole_n150" in text
    assert all(b in text for b in report.binding)
    assert "simulator measured" in text and "The bottleneck is" in text
    solved, pruned, infeasible = report.search
    assert solved > 0 and f"{solved} were solved, {pruned} cut off by a lower bound" in text
    assert f"{infeasible} had no legal block sizes" in text
    assert all(f"{a} across {n} cores" in text for a, n in report.axis_cores)
    assert f"{report.l1_bytes:,} of {report.l1_capacity:,} usable bytes" in text
    assert all(s.endswith(".") for s in sentences)


def test_explain_without_a_ranking_says_no_search_counts(report: ReportData) -> None:
    text = " ".join(explain_sentences(dataclasses.replace(report, search=(0, 0, 0))))
    assert "were solved" not in text and report.candidate in text


def test_verify_table_has_every_output(report: ReportData) -> None:
    from loom.backends.ttlang import OutputCheck, VerifyResult

    checks = (
        OutputCheck("out", True, 1e-3, 2e-3, 1e-2),
        OutputCheck("lse", False, 5e-1, 3e-1, 1e-2),
    )
    result = VerifyResult(False, 5e-1, 3e-1, 1e-2, 0.1, "FAIL", "", outputs=checks)
    rows = verify_rows(result, ("out", "lse"))
    assert [(r.output, r.passed, r.tolerance) for r in rows] == [
        ("out", True, 1e-2),
        ("lse", False, 1e-2),
    ]
    page = render_report(dataclasses.replace(report, verify=rows))
    table = page.split('id="verify"')[1]
    assert "<code>out</code>" in table and "<code>lse</code>" in table
    assert "3.000e-01" in table and table.count("1.000e-02") == 2
    sentences = explain_sentences(dataclasses.replace(report, verify=rows))
    assert any("output lse does NOT match torch" in s for s in sentences)


def test_heg_simulated_figures_are_per_pipe_and_add_up(compiled, report: ReportData) -> None:  # type: ignore[no-untyped-def]
    from loom.report.heg_view import HegItem

    _, _, sim = compiled
    assert report.heg is not None

    def nodes(n: HegItem) -> list[HegItem]:
        return [n, *(m for c in n.children for m in nodes(c))]

    figures = {n.name: n for n in nodes(report.heg) if n.simulated is not None}
    assert "load@loop:tile_k" in figures and "compute@loop:tile_k#0" in figures
    assert figures["load@loop:tile_k"].engine == "reader+writer"  # a and b multicast
    assert figures["compute@loop:tile_k#0"].engine == "compute"
    # every busy cycle of every engine lands on exactly one node
    total = sum(e.mean for e in sim.engine_busy) * sim.kernel_cycles
    assert sum(n.simulated for n in figures.values()) == pytest.approx(total, rel=1e-6)


def test_page_shows_the_kernels_roofline_and_the_picks_share(report: ReportData) -> None:
    bound = report.roofline.bound
    assert bound is not None and bound.cores == 64
    # gemm M=256, N=512, K=128 in bf16: A, B and C cross DRAM once at 12 banks x 24 B/cycle
    assert bound.dram == pytest.approx((256 * 128 + 128 * 512 + 256 * 512) * 2 / 288)
    assert bound.bound == "dram"
    assert report.roofline.simulated_fraction is not None
    assert 0 < report.roofline.simulated_fraction <= 1
    page = render_report(report)
    assert "Roofline of the kernel on the whole chip (64 cores)" in page
    assert f"simulated at {100 * report.roofline.simulated_fraction:.0f}%" in page
