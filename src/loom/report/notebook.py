"""The compact HTML view of a compiled kernel, shown by Jupyter (`_repr_html_`).

`compact_view` gathers typed data from the schedule (and the simulation, when there is
one); `render_compact` fills a Jinja2 template with it. Keeping the two apart lets the
full HTML report reuse the data or swap the template.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

from loom.arch import Arch
from loom.ir.schedule import Schedule
from loom.report.summary import mesh_labels

if TYPE_CHECKING:
    from loom.sim import SimResult

_PALETTE = ("#cfe3f7", "#d9f0d3", "#fde3c8", "#e8dcf2", "#f7d4dc", "#fff3bf")
_IDLE = "#f4f4f4"
_KNOBS = {
    (0, 0): "sequential",
    (0, 1): "double-buffered output",
    (1, 0): "double-buffered inputs",
    (1, 1): "double-buffered inputs and output",
}


@dataclass(frozen=True, slots=True)
class MeshCell:
    label: str
    """Spatial index per grid axis, e.g. `m3n1`; empty for an idle core."""
    title: str
    """Hover text: the core's coordinates and role."""
    color: str


@dataclass(frozen=True, slots=True)
class TimingRow:
    label: str
    cycles: str
    us: str
    tflops: str


@dataclass(frozen=True, slots=True)
class CompactView:
    """Everything the compact report shows, already formatted."""

    title: str
    subtitle: str
    grid_x: int
    grid_y: int
    mesh: tuple[tuple[MeshCell, ...], ...]
    legend: str
    facts: tuple[tuple[str, str], ...]
    """(name, value) rows: candidate, block sizes, pipeline, copies, bottleneck, L1."""
    timing: tuple[TimingRow, ...]
    """Modeled, and simulated when a simulation ran."""
    note: str


def compact_view(
    schedule: Schedule, arch: Arch, sim: SimResult | None = None, flops: int = 0
) -> CompactView:
    s = schedule
    m = s.mapping
    labels = mesh_labels(s, arch)
    # One colour per spatial index of the first axis that is spread over cores, so that
    # the cores sharing a block row (and its multicast group) show as one colour band.
    spread = [a for a in s.block_sizes if m.spatial_factor(a) > 1]
    mesh = tuple(
        tuple(
            MeshCell(
                label=label,
                title=f"core (y={y}, x={x})" + (f": block {label}" if label else ": idle"),
                color=(
                    _PALETTE[m.spatial_index(spread[0], y, x) % len(_PALETTE)]
                    if label and spread
                    else (_PALETTE[0] if label else _IDLE)
                ),
            )
            for x, label in enumerate(row)
        )
        for y, row in enumerate(labels)
    )
    legend = "; ".join(
        f"{a.removeprefix('tile_')[:1]} = index along {a} ({m.spatial_factor(a)} cores, "
        f"{s.waves.get(a, 1)} wave(s))"
        for a in spread
    )
    shape = ", ".join(f"{k}={v}" for k, v in s.shape.items())
    return CompactView(
        title=f"{s.kernel} on {arch.name}",
        subtitle=f"{shape} · {s.dtype} · {s.math_fidelity} · {m.num_cores} of "
        f"{arch.grid_x * arch.grid_y} cores",
        grid_x=arch.grid_x,
        grid_y=arch.grid_y,
        mesh=mesh,
        legend=legend or "one core",
        facts=_facts(s),
        timing=_timing(s, arch, sim, flops),
        note="" if sim is not None else "Not simulated yet: call .simulate() to compare.",
    )


def _facts(s: Schedule) -> tuple[tuple[str, str], ...]:
    facts = [
        ("candidate", s.candidate),
        ("block sizes", ", ".join(f"{k} = {v}" for k, v in s.block_sizes.items())),
    ]
    facts += [
        (f"pipe {node}", _KNOBS[(k["b_load"], k["b_store"])]) for node, k in s.pipeline.items()
    ]
    facts += [
        (
            f"{c.kind} {c.tensor}",
            f"{c.mode} to {c.area[0]}x{c.area[1]} cores" if c.mode == "multicast" else c.mode,
        )
        for c in s.copies
    ]
    facts.append(("bottleneck", s.bottleneck.get("text", "")))
    facts += [("binding", b) for b in s.binding_constraints]
    facts.append(
        (
            "L1 per core",
            f"{s.l1_bytes:,} of {s.l1_capacity_bytes:,} bytes "
            f"({100 * s.l1_bytes / max(s.l1_capacity_bytes, 1):.0f}%)",
        )
    )
    return tuple(facts)


def _timing(s: Schedule, arch: Arch, sim: SimResult | None, flops: int) -> tuple[TimingRow, ...]:
    rows = [
        TimingRow(
            "modeled", f"{s.modeled_cycles:,}", f"{s.modeled_us:,.2f}", f"{s.modeled_tflops:.2f}"
        )
    ]
    if sim is not None:
        useful = flops / (sim.us * 1e6) if flops and sim.us else sim.tflops
        rows.append(TimingRow("simulated", f"{sim.cycles:,.0f}", f"{sim.us:,.2f}", f"{useful:.2f}"))
        if s.modeled_cycles:
            rows.append(
                TimingRow("simulated / modeled", f"{sim.cycles / s.modeled_cycles:.2f}", "", "")
            )
    return tuple(rows)


@cache
def _template():  # type: ignore[no-untyped-def]
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    text = files("loom.report").joinpath("templates/notebook_compact.html.j2").read_text()
    return env.from_string(text)


def render_compact(view: CompactView) -> str:
    """The compact view as one self-contained HTML fragment (inline styles, no scripts)."""
    return str(_template().render(v=view))
