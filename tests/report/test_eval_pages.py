"""The evaluation's index page and the names and figures of its case pages."""

from __future__ import annotations

from loom.eval.rows import ResultRow
from loom.report.eval_pages import case_page, page_name, render_eval_index, simulated_top_k
from loom.report.model import ReportData

SHAPE = "M=256,N=512,K=128"


def _rows(report: ReportData) -> list[ResultRow]:
    def row(policy: str, rank: int, candidate: str, cycles: float, status: str = "ok") -> ResultRow:
        fraction = 0.5 if (policy, rank) == ("loom", 1) else 0.25  # the pick's share of roofline
        return ResultRow("gemm", "wormhole_n150", SHAPE, policy, rank, status, candidate,
                         cycles=cycles, roofline_bound="dram",
                         roofline_fraction=fraction)  # fmt: skip

    pick = report.candidates[0].name
    return [
        row("loom", 2, "second", 30_000.0),
        row("loom", 1, pick, 20_000.0),
        row("loom", 3, "", 0.0, "error: lowering failed"),
        row("loom-neighbour", 1, pick, 25_000.0),
        row("ttnn-matmul-oob", 1, "oob", 40_000.0),
        row("tileloom", 2, "t2", 33_000.0),
        row("tileloom", 1, "t1", 35_000.0),
    ]


def test_page_names_are_safe_and_distinct() -> None:
    a = page_name("gemm", "wormhole_n150", "M=256,N=512,K=128")
    b = page_name("gemm", "wormhole_n150", "M=512,N=512,K=128")
    assert a != b and a.endswith(".html") and "/" not in a and "," not in a and "=" not in a


def test_top_k_and_baselines_come_from_the_rows(report: ReportData) -> None:
    rows = _rows(report)
    assert simulated_top_k(rows) == ((report.candidates[0].name, 20_000.0), ("second", 30_000.0))
    page = case_page(report, SHAPE, rows)
    assert page.baselines == (("tileloom", 35_000.0), ("ttnn-matmul-oob", 40_000.0))  # rank 1 each
    assert page.file == page_name("gemm", "wormhole_n150", SHAPE)
    assert report.sim is not None and page.simulated_cycles == report.sim.cycles


def test_index_links_every_case(report: ReportData) -> None:
    page = case_page(report, SHAPE, _rows(report))
    html = render_eval_index((page, page))
    assert html.startswith("<!DOCTYPE html>") and html.count(f'href="{page.file}"') == 4
    assert "ttnn-matmul-oob 40,000" in html and report.candidate in html
    assert page.roofline == "50% dram" and '<td class="num">50% dram</td>' in html
    assert "<script" not in html
