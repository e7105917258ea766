"""Figures like the paper's 7, 10, 11 and 12, drawn from evaluation rows (matplotlib).

Each figure is returned as {file name: bytes} (PNG and SVG); only the CLI writes files.
Metadata that would change from run to run (dates, random SVG ids) is pinned, so the same
rows give the same files.

* fig7_speedup  — per GEMM shape, Loom's speed-up over TTNN's out-of-box matmul, per arch
* fig10_top5    — per GEMM shape, the spread of the top-5 candidates' simulated
  performance, normalised to the solver's pick (1.0)
* fig11_blocks  — per GEMM shape, the simulated performance of the 27-neighbour
  block-size box around the solver's pick, normalised to TTNN; the pick is a diamond
* fig12_model   — per GEMM shape, modeled vs simulated TFLOPS of the solver's pick
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from loom.eval.rows import ResultRow
from loom.report.eval_tables import pick

plt.rcParams["svg.hashsalt"] = "loom"


def _save(fig: Figure, name: str) -> dict[str, bytes]:
    out = {}
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=meta, bbox_inches="tight", dpi=110)
        out[f"{name}.{ext}"] = buf.getvalue()
    plt.close(fig)
    return out


def _gemm_shapes(rows: list[ResultRow], arch: str) -> list[str]:
    shapes = {r.shape for r in rows if r.kernel == "gemm" and r.arch == arch}

    def key(s: str) -> tuple[int, ...]:
        return tuple(int(p.split("=")[1]) for p in s.split(","))

    return sorted(shapes, key=key)


def _label(shape: str) -> str:
    def short(v: str) -> str:
        n = int(v)
        return f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)

    return "(" + ",".join(short(p.split("=")[1]) for p in shape.split(",")) + ")"


def fig7(rows: list[ResultRow]) -> dict[str, bytes]:
    picked = pick(rows)
    archs = sorted({r.arch for r in rows if r.kernel == "gemm"})
    fig, axes = plt.subplots(1, max(1, len(archs)), figsize=(6 * max(1, len(archs)), 5.5))
    axes = list(axes) if len(archs) > 1 else [axes]
    for ax, arch in zip(axes, archs, strict=False):
        shapes = _gemm_shapes(rows, arch)
        values = []
        for s in shapes:
            pol = picked.get(("gemm", arch, s), {})
            ok = "loom" in pol and "ttnn-matmul-oob" in pol
            values.append(pol["ttnn-matmul-oob"].cycles / pol["loom"].cycles if ok else 0.0)
        im = ax.imshow([[v] for v in values], cmap="RdYlGn", vmin=0.5, vmax=1.5, aspect=0.3)
        ax.set_yticks(range(len(shapes)), [_label(s) for s in shapes], fontsize=7)
        ax.set_xticks([])
        for i, v in enumerate(values):
            ax.text(0, i, f"{v:.2f}" if v else "n/a", ha="center", va="center", fontsize=7)
        ax.set_title(f"{arch}: Loom / TTNN (M,N,K)", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.05)
    return _save(fig, "fig7_speedup")


def _by_case(rows: list[ResultRow], policy: str) -> dict[tuple[str, str], list[ResultRow]]:
    out: dict[tuple[str, str], list[ResultRow]] = defaultdict(list)
    for r in rows:
        if r.kernel == "gemm" and r.policy == policy and r.status == "ok" and r.cycles > 0:
            out[(r.arch, r.shape)].append(r)
    return out


def fig10(rows: list[ResultRow]) -> dict[str, bytes]:
    top = _by_case(rows, "loom")
    archs = sorted({a for a, _ in top})
    fig, axes = plt.subplots(len(archs) or 1, 1, figsize=(11, 3.2 * max(1, len(archs))))
    axes = list(axes) if len(archs) > 1 else [axes]
    for ax, arch in zip(axes, archs, strict=False):
        shapes = _gemm_shapes(rows, arch)
        for i, s in enumerate(shapes):
            rs = top.get((arch, s), [])
            first = [r for r in rs if r.rank == 1]
            if not first:
                continue
            perf = [first[0].cycles / r.cycles for r in rs]
            ax.vlines(i, min(perf), max(perf), linewidth=6, color="tab:blue", alpha=0.6)
        ax.axhline(1.0, color="k", linewidth=0.8)
        ax.set_xticks(range(len(shapes)), [_label(s) for s in shapes], rotation=60, fontsize=7)
        ax.set_ylabel("perf / top-1")
        ax.set_title(f"{arch}: simulated spread of Loom's top-5 candidates", fontsize=9)
    return _save(fig, "fig10_top5")


def fig11(rows: list[ResultRow]) -> dict[str, bytes]:
    picked = pick(rows)
    neigh = _by_case(rows, "loom-neighbour")
    archs = sorted({a for a, _ in neigh})
    fig, axes = plt.subplots(len(archs) or 1, 1, figsize=(11, 3.4 * max(1, len(archs))))
    axes = list(axes) if len(archs) > 1 else [axes]
    for ax, arch in zip(axes, archs, strict=False):
        shapes = _gemm_shapes(rows, arch)
        data, marks, pos = [], [], []
        for i, s in enumerate(shapes):
            pol = picked.get(("gemm", arch, s), {})
            if "ttnn-matmul-oob" not in pol or (arch, s) not in neigh:
                continue
            ref = pol["ttnn-matmul-oob"].cycles
            data.append([ref / r.cycles for r in neigh[(arch, s)]])
            marks.append(ref / pol["loom"].cycles if "loom" in pol else float("nan"))
            pos.append(i)
        if data:
            ax.boxplot(data, positions=pos, widths=0.6, whis=(0, 100))
            ax.scatter(pos, marks, marker="D", color="tab:orange", zorder=3, label="solver's pick")
            ax.legend(fontsize=7)
        ax.set_xticks(range(len(shapes)), [_label(s) for s in shapes], rotation=60, fontsize=7)
        ax.set_ylabel("perf / TTNN")
        ax.set_title(f"{arch}: 27-neighbour block sizes around the solver's pick", fontsize=9)
    return _save(fig, "fig11_blocks")


def fig12(rows: list[ResultRow]) -> dict[str, bytes]:
    top = _by_case(rows, "loom")
    archs = sorted({a for a, _ in top})
    fig, axes = plt.subplots(len(archs) or 1, 1, figsize=(11, 3.2 * max(1, len(archs))))
    axes = list(axes) if len(archs) > 1 else [axes]
    for ax, arch in zip(axes, archs, strict=False):
        first = {s: r for (a, s), rs in top.items() if a == arch for r in rs if r.rank == 1}
        shapes = [s for s in _gemm_shapes(rows, arch) if s in first]
        firsts = [first[s] for s in shapes]
        ax.plot(range(len(shapes)), [r.modeled_tflops for r in firsts], "o-", label="modeled")
        ax.plot(range(len(shapes)), [r.tflops for r in firsts], "s-", label="simulated")
        ax.set_xticks(range(len(shapes)), [_label(s) for s in shapes], rotation=60, fontsize=7)
        ax.set_ylabel("TFLOPS")
        ax.legend(fontsize=7)
        ax.set_title(f"{arch}: modeled vs simulated TFLOPS of the solver's pick", fontsize=9)
    return _save(fig, "fig12_model")


def eval_figures(rows: Iterable[ResultRow]) -> dict[str, bytes]:
    """Every figure, as {file name: bytes}."""
    rows = list(rows)
    out: dict[str, bytes] = {}
    for make in (fig7, fig10, fig11, fig12):
        out.update(make(rows))
    return out
