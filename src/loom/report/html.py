"""HTML reports of one compile: a full self-contained page and a compact view.

Both are rendered from :class:`loom.report.model.ReportData` by Jinja2 templates shipped
as package data (`loom/report/templates/`); the charts are matplotlib SVG inlined in the
page, the style sheet and the small script are inlined too, so the file opens anywhere
without a network. The compact view is what a notebook shows
(`CompiledKernel._repr_html_`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from loom.report.charts import neighbourhood_chart, roofline_chart, timeline_chart
from loom.report.explain_text import explain_sentences
from loom.report.heg_view import binding_path
from loom.report.model import ReportData

if TYPE_CHECKING:
    from jinja2 import Environment


@lru_cache(maxsize=1)
def environment() -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("loom.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cycles"] = lambda v: f"{v:,.0f}"
    env.filters["kib"] = lambda v: f"{v / 1024:,.1f} KiB"
    env.filters["pct"] = lambda v: f"{100 * v:.0f}%"
    env.globals["todict"] = dict
    env.filters["sizes"] = lambda pairs: ", ".join(f"{k}={v}" for k, v in pairs)
    return env


def _charts(data: ReportData) -> dict[str, str]:
    from markupsafe import Markup

    return {
        "neighbourhood": Markup(neighbourhood_chart(data.neighbours)),
        "roofline": Markup(roofline_chart(data.roofline)),
        "timeline": Markup(
            timeline_chart(data.sim.timeline) if data.sim and data.sim.timeline else ""
        ),
    }


def render_report(data: ReportData) -> str:
    """The full page: source, mesh, latency graph, candidates, simulation, verification."""
    template = environment().get_template("report.html.j2")
    return template.render(
        d=data,
        charts=_charts(data),
        sentences=explain_sentences(data),
        binding_path=binding_path(data.heg) if data.heg else (),
    )


def render_compact(data: ReportData) -> str:
    """A fragment (no <html> wrapper, no script) for notebooks: mesh, block sizes,
    pipelining, copies, L1, modeled vs simulated time, bottleneck and binding constraints."""
    template = environment().get_template("compact.html.j2")
    return template.render(d=data)
