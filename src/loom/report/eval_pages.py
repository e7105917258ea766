"""The evaluation's HTML: one report page per case (the same page as `--html`, built on
the same ReportData) and an index page that links them with Loom's simulated time next
to every baseline's, from the evaluation's result rows."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from loom.eval.rows import ResultRow
from loom.report.html import environment
from loom.report.model import ReportData


@dataclass(frozen=True, slots=True)
class CasePage:
    """One row of the index: a case, its page, and what the result rows say about it."""

    kernel: str
    arch: str
    shape: str
    file: str
    candidate: str
    modeled_cycles: int
    simulated_cycles: float | None
    baselines: tuple[tuple[str, float], ...]
    """(policy, simulated cycles) of the best-ranked row of every other policy."""
    roofline: str = ""
    """Loom's pick as a share of the kernel's roofline and the bounding resource, from
    its result row (`ResultRow.roofline_fraction`), e.g. `74% dram`; empty without one."""


def page_name(kernel: str, arch: str, shape: str) -> str:
    """A file name for the case's page: stable, readable and safe on any file system."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{kernel}__{arch}__{shape}") + ".html"


def simulated_top_k(rows: Iterable[ResultRow]) -> tuple[tuple[str, float], ...]:
    """(candidate, simulated cycles) of Loom's ranked candidates among a case's rows."""
    return tuple(
        (r.candidate, r.cycles)
        for r in sorted(rows, key=lambda r: r.rank)
        if r.policy == "loom" and r.status == "ok"
    )


def case_page(data: ReportData, shape: str, rows: Iterable[ResultRow]) -> CasePage:
    rows = list(rows)
    best: dict[str, ResultRow] = {}
    pick = next((r for r in rows if r.policy == "loom" and r.rank == 1 and r.status == "ok"), None)
    for r in sorted(rows, key=lambda r: r.rank):
        if r.status == "ok" and not r.policy.startswith("loom"):
            best.setdefault(r.policy, r)
    return CasePage(
        kernel=data.kernel,
        arch=data.arch,
        shape=shape,
        file=page_name(data.kernel, data.arch, shape),
        candidate=data.candidate,
        modeled_cycles=data.modeled_cycles,
        simulated_cycles=data.sim.cycles if data.sim else None,
        baselines=tuple((p, r.cycles) for p, r in sorted(best.items())),
        roofline=(
            f"{100 * pick.roofline_fraction:.0f}% {pick.roofline_bound}"
            if pick and pick.roofline_fraction
            else ""
        ),
    )


def render_eval_index(pages: tuple[CasePage, ...]) -> str:
    """The index page: one row per case, linking its report page."""
    return environment().get_template("eval_index.html.j2").render(pages=pages)
