"""The core mesh of one compile, laid out to scale in NoC coordinates.

Geometry only (pixels, labels, hover text) as frozen data: the template draws it as SVG.
Compute cores sit at their NoC router (`worker_noc_x/y` of the architecture), DRAM banks
at theirs, so the distances a reader sees are the hop counts the NoC pays. Every core of
the grid is one `CoreCell` (idle ones too); every pipe of every multicast or gather net
is a region with its origin and the dimension-order route between them; links that
carried data in the simulation are drawn with their utilization.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loom.arch import Arch
from loom.ir.program import Pipe, Program
from loom.ir.schedule import Schedule
from loom.sim import SimResult

ToPixels = Callable[[tuple[int, int]], tuple[float, float]]
"""Core (y, x) in program coordinates -> pixel centre."""

CELL = 56
"""Pixels per NoC router step."""
PAD = 28
PALETTE = ("#d9480f", "#1971c2", "#2f9e44", "#9c36b5", "#e8590c", "#0c8599", "#c2255c")


@dataclass(frozen=True, slots=True)
class CoreCell:
    y: int
    x: int
    px: float
    py: float
    role: str
    """idle | unicast | receiver | origin"""
    label: str
    title: str


@dataclass(frozen=True, slots=True)
class BankCell:
    index: int
    px: float
    py: float
    title: str
    utilization: float | None


@dataclass(frozen=True, slots=True)
class Region:
    net: str
    color: str
    x: float
    y: float
    w: float
    h: float
    origin: tuple[float, float]
    route: tuple[tuple[float, float], ...]
    title: str


@dataclass(frozen=True, slots=True)
class LinkSeg:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float
    title: str


@dataclass(frozen=True, slots=True)
class NetLegend:
    name: str
    kind: str
    color: str
    pipes: int


@dataclass(frozen=True, slots=True)
class Separator:
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, slots=True)
class MeshView:
    width: int
    height: int
    cell: int
    cores: tuple[CoreCell, ...]
    banks: tuple[BankCell, ...]
    regions: tuple[Region, ...]
    nets: tuple[NetLegend, ...]
    links: tuple[LinkSeg, ...]
    separators: tuple[Separator, ...]
    caption: str


def _center(noc_x: int, noc_y: int) -> tuple[float, float]:
    return (PAD + noc_x * CELL + CELL / 2, PAD + noc_y * CELL + CELL / 2)


def mesh_view(s: Schedule, program: Program, arch: Arch, sim: SimResult | None) -> MeshView:
    nx = max([*arch.worker_noc_x, *(b.noc_x for b in arch.dram.banks)]) + 1
    ny = max([*arch.worker_noc_y, *(b.noc_y for b in arch.dram.banks)]) + 1

    def core_xy(core: tuple[int, int]) -> tuple[float, float]:
        return _center(arch.worker_noc_x[core[1]], arch.worker_noc_y[core[0]])

    sends: dict[tuple[int, int], list[str]] = {}
    receives: dict[tuple[int, int], list[str]] = {}
    regions: list[Region] = []
    legends: list[NetLegend] = []
    for i, net in enumerate(program.nets):
        color = PALETTE[i % len(PALETTE)]
        legends.append(NetLegend(net.name, net.kind, color, len(net.pipes)))
        for pipe in net.pipes:
            sends.setdefault(pipe.src, []).append(
                f"{net.kind} {net.name} to {len(pipe.receivers)} core(s)"
            )
            for r in pipe.receivers:
                if r != pipe.src:
                    receives.setdefault(r, []).append(f"{net.name} from core {pipe.src}")
            regions.append(_region(net.name, net.kind, color, pipe, core_xy))
    m = s.mapping
    axes = list(s.block_sizes)[: len(s.waves)] or list(s.waves)
    cores = []
    for y in range(arch.grid_y):
        for x in range(arch.grid_x):
            cores.append(_core(s, arch, y, x, axes, sends, receives, core_xy))
    banks = _banks(arch, sim)
    caption = (
        f"{m.num_cores} of {arch.num_cores} cores ({m.cores_y} rows x {m.cores_x} columns), "
        f"view {m.label()}; NoC grid {nx}x{ny} routers"
    )
    return MeshView(
        width=2 * PAD + nx * CELL,
        height=2 * PAD + ny * CELL,
        cell=CELL,
        cores=tuple(cores),
        banks=banks,
        regions=tuple(regions),
        nets=tuple(legends),
        links=_links(sim, nx, ny),
        separators=_separators(s, arch),
        caption=caption,
    )


def _region(net: str, kind: str, color: str, pipe: Pipe, core_xy: ToPixels) -> Region:
    points = [core_xy(r) for r in pipe.receivers]
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    half = CELL / 2 - 3
    cx, cy = core_xy(pipe.src)
    ox, oy = cx + CELL / 2 - 12, cy - CELL / 2 + 12  # the sender's top-right corner
    tx, ty = (sum(xs) / len(xs), sum(ys) / len(ys))
    route = ((ox, oy), (tx, oy), (tx, ty))  # dimension order: along x, then y
    what = "multicast" if kind == "multicast" else "gather into"
    return Region(
        net=net,
        color=color,
        x=min(xs) - half,
        y=min(ys) - half,
        w=max(xs) - min(xs) + 2 * half,
        h=max(ys) - min(ys) + 2 * half,
        origin=(ox, oy),
        route=route,
        title=(
            f"{net}: core {pipe.src} {what} rows {pipe.dst_y[0]}..{pipe.dst_y[1] - 1}, "
            f"columns {pipe.dst_x[0]}..{pipe.dst_x[1] - 1} ({len(pipe.receivers)} cores)"
        ),
    )


def _core(
    s: Schedule,
    arch: Arch,
    y: int,
    x: int,
    axes: list[str],
    sends: dict[tuple[int, int], list[str]],
    receives: dict[tuple[int, int], list[str]],
    core_xy: ToPixels,
) -> CoreCell:
    m = s.mapping
    px, py = core_xy((y, x))
    noc = f"NoC ({arch.worker_noc_x[x]}, {arch.worker_noc_y[y]})"
    if y >= m.cores_y or x >= m.cores_x:
        return CoreCell(y, x, px, py, "idle", "", f"core ({y}, {x}) at {noc}: idle")
    parts = []
    label = []
    for axis in axes:
        idx = m.spatial_index(axis, y, x)
        factor = m.spatial_factor(axis)
        waves = s.waves.get(axis, 1)
        blocks = ", ".join(str(idx + w * factor) for w in range(min(waves, 6)))
        more = ", ..." if waves > 6 else ""
        parts.append(f"{axis} index {idx} of {factor}, {waves} wave(s): blocks {blocks}{more}")
        if factor > 1:
            label.append(f"{axis.removeprefix('tile_')[:1]}{idx}")
    role = "origin" if (y, x) in sends else "receiver" if (y, x) in receives else "unicast"
    lines = [f"core ({y}, {x}) at {noc}", *parts]
    lines += [f"sends {t}" for t in sends.get((y, x), [])]
    lines += [f"receives {t}" for t in receives.get((y, x), [])]
    return CoreCell(y, x, px, py, role, " ".join(label), "\n".join(lines))


def _banks(arch: Arch, sim: SimResult | None) -> tuple[BankCell, ...]:
    out = []
    for i, b in enumerate(arch.dram.banks):
        px, py = _center(b.noc_x, b.noc_y)
        util = None
        if sim is not None and i < len(sim.dram_bank_utilization):
            util = sim.dram_bank_utilization[i]
        text = f"DRAM bank {i} at NoC ({b.noc_x}, {b.noc_y})"
        if util is not None:
            text += f": {100 * util:.0f}% busy in the simulation"
        out.append(BankCell(i, px, py, text, util))
    return tuple(out)


_STEP = {"east": (1, 0), "west": (-1, 0), "south": (0, 1), "north": (0, -1)}


def _links(sim: SimResult | None, nx: int, ny: int) -> tuple[LinkSeg, ...]:
    if sim is None:
        return ()
    segs = []
    for link in sim.link_utilization:
        dx, dy = _STEP[link.direction]
        tx, ty = link.x + dx, link.y + dy
        if not (0 <= tx < nx and 0 <= ty < ny):
            continue  # a torus wrap-around link: not drawn
        off = 5 if link.noc == 0 else -5
        x1, y1 = _center(link.x, link.y)
        x2, y2 = _center(tx, ty)
        if dx:
            y1, y2 = y1 + off, y2 + off
        else:
            x1, x2 = x1 + off, x2 + off
        segs.append(
            LinkSeg(
                x1,
                y1,
                x2,
                y2,
                1 + 5 * min(link.utilization, 1.0),
                f"NoC{link.noc} link ({link.x},{link.y}) {link.direction}: "
                f"{100 * link.utilization:.0f}% of its bandwidth",
            )
        )
    return tuple(segs)


def _separators(s: Schedule, arch: Arch) -> tuple[Separator, ...]:
    """Lines between the groups of every outer view level (e.g. the 2 halves of y2y4)."""
    m = s.mapping
    out = []
    for dim in ("x", "y"):
        coords = arch.worker_noc_x if dim == "x" else arch.worker_noc_y
        used = m.cores(dim)
        for lv in m.levels_of(dim):
            if lv.level == 0:
                continue
            stride = m.stride(lv)
            for k in range(stride, used, stride):
                mid = PAD + (coords[k - 1] + coords[k]) / 2 * CELL + CELL / 2
                other = arch.worker_noc_y if dim == "x" else arch.worker_noc_x
                other_used = m.cores("y" if dim == "x" else "x")
                lo = PAD + other[0] * CELL + 2
                hi = PAD + other[other_used - 1] * CELL + CELL - 2
                if dim == "x":
                    out.append(Separator(mid, lo, mid, hi))
                else:
                    out.append(Separator(lo, mid, hi, mid))
    return tuple(out)
