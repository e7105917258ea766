"""Small charts of a report, drawn with matplotlib and returned as inline SVG text.

Deterministic output: a fixed hash salt per chart (so element ids differ between the
charts of one page and do not change between runs), no date metadata, text kept as text.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from loom.report.model import NeighbourRow, Roofline, Timeline

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=96, layout="constrained")


def _svg(fig: Figure, salt: str) -> str:
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def neighbourhood_chart(rows: tuple[NeighbourRow, ...]) -> str:
    """Modeled cycles of every legal neighbour of the chosen block sizes, best first."""
    if not rows:
        return ""
    fig = _figure(7.5, 2.6)
    ax = fig.add_subplot()
    labels = ["\n".join(f"{v}" for _, v in r.block_sizes) for r in rows]
    colors = ["#d9480f" if r.is_solution else "#adb5bd" for r in rows]
    ax.bar(range(len(rows)), [r.modeled_cycles / 1e3 for r in rows], color=colors)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("modeled kcycles")
    names = ", ".join(n for n, _ in rows[0].block_sizes)
    ax.set_title(f"legal neighbours ({names}); the solution in orange", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "neighbourhood")


def timeline_chart(tl: Timeline) -> str:
    """Busy fraction of every (core, engine) over time, as a heat map."""
    import numpy as np

    rows = tl.rows
    height = min(1.2 + 0.055 * len(rows), 12.0)
    fig = _figure(7.5, height)
    ax = fig.add_subplot()
    data = np.array([r[1] for r in rows])
    span_us = tl.bin_us * data.shape[1]
    image = ax.imshow(
        data,
        aspect="auto",
        interpolation="nearest",
        cmap="viridis",
        vmin=0.0,
        vmax=1.0,
        extent=(0.0, span_us, len(rows) - 0.5, -0.5),
    )
    step = max(1, len(rows) // 24)
    ax.set_yticks(range(0, len(rows), step), [rows[i][0] for i in range(0, len(rows), step)])
    ax.tick_params(axis="y", labelsize=6)
    ax.set_xlabel("time since the kernel started (us)")
    fig.colorbar(image, ax=ax, label="busy fraction", shrink=min(1.0, 3.0 / height), pad=0.01)
    ax.set_title("simulated busy fraction per core and engine (yellow = busy)", fontsize=9)
    return _svg(fig, "timeline")


def roofline_chart(r: Roofline) -> str:
    """Attainable TFLOPS = min(peak, intensity x DRAM bandwidth), and this kernel on it."""
    import numpy as np

    fig = _figure(4.2, 3.0)
    ax = fig.add_subplot()
    bw_tflops = r.dram_gbps / 1e3  # TFLOPS per FLOP/byte
    ridge = r.peak_tflops / bw_tflops if bw_tflops else 1.0
    lo = min(r.intensity, ridge) / 20 if r.intensity > 0 else ridge / 100
    hi = max(r.intensity, ridge) * 20
    xs = np.geomspace(lo, hi, 64)
    ax.loglog(xs, np.minimum(r.peak_tflops, xs * bw_tflops), color="#495057", label="roof")
    ax.scatter([r.intensity], [r.modeled_tflops], color="#1971c2", zorder=3, label="modeled")
    if r.simulated_tflops is not None:
        ax.scatter(
            [r.intensity],
            [r.simulated_tflops],
            color="#d9480f",
            marker="D",
            zorder=3,
            label="simulated",
        )
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    low, high = ax.get_ylim()
    ax.set_yticks([v for v in (0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000) if low <= v <= high])
    ax.set_xlabel("FLOP per DRAM byte")
    ax.set_ylabel("TFLOPS")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(
        f"roofline: peak {r.peak_tflops:.0f} TFLOPS, DRAM {r.dram_gbps:.0f} GB/s achievable",
        fontsize=8,
    )
    return _svg(fig, "roofline")
