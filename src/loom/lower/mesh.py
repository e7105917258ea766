"""Core-coordinate arithmetic of a schedule's mapping, as expressions and as numbers.

A Program is SPMD, so everything that depends on the core (which logical tile it
owns, whether it sends a multicast, who owns its split reduction) is an expression of
`CORE_Y`/`CORE_X` built here from the Schedule's view (see loom.ir.schedule for the
mixed-radix conventions). The same module enumerates the concrete pipes of a net.
"""

from __future__ import annotations

from loom.ir.program import CORE_X, CORE_Y, Pipe
from loom.ir.schedule import Mapping, MeshLevel
from loom.symbolic import Cond, Const, Expr, cmp, conj, floordiv, mod

CORE = {"x": CORE_X, "y": CORE_Y}


def level_index(mapping: Mapping, level: MeshLevel) -> Expr:
    """Index of `level` on this core: (coord // stride) % size, simplified where the
    level is the innermost (no division) or outermost (no modulo) of its dim."""
    stride = mapping.stride(level)
    outermost = level == mapping.levels_of(level.dim)[-1]
    coord: Expr = CORE[level.dim]
    index = floordiv(coord, stride) if stride > 1 else coord
    return index if outermost else mod(index, level.size)


def spatial_index(mapping: Mapping, axis: str) -> Expr:
    """The axis's spatial index on this core (mixed radix of its levels)."""
    total: Expr = Const(0)
    for lv in mapping.axis_levels(axis):
        total = total + level_index(mapping, lv) * mapping.radix(lv)
    return total


def _at_corner(coord: Expr, cores: int, size: int, last: bool) -> Cond:
    """True where `coord` is the first (or, with `last`, the last) core of its aligned run
    of `size` cores."""
    index = coord if size == cores else mod(coord, size)
    return cmp("==", index, size - 1 if last else 0)


def group_origin_cond(cores: tuple[int, int], area: tuple[int, int], last: bool = False) -> Cond:
    """True on the sending corner of its aligned `area` = (rows, cols) block: the first
    core, or with `last` the last one (see `multicast_pipes`)."""
    return conj(
        _at_corner(CORE_Y, cores[0], area[0], last), _at_corner(CORE_X, cores[1], area[1], last)
    )


def origin_row_cond(cores: tuple[int, int], area: tuple[int, int], last: bool = False) -> Cond:
    """True on the cores in the same row as their block's sending corner."""
    return _at_corner(CORE_Y, cores[0], area[0], last)


def owner_of(mapping: Mapping, axis: str, core: tuple[int, int]) -> tuple[int, int]:
    """The core that differs from `core` only in `axis`'s levels, all at index 0."""
    coord = {"y": core[0], "x": core[1]}
    for lv in mapping.axis_levels(axis):
        stride = mapping.stride(lv)
        coord[lv.dim] -= (coord[lv.dim] // stride) % lv.size * stride
    return (coord["y"], coord["x"])


def gather_pipes(mapping: Mapping, axis: str) -> tuple[Pipe, ...]:
    """Unicast pipes from every core to the owner of its split, ordered by owner and
    then by split index, so partials arrive in logical order."""
    pipes: list[tuple[tuple[int, int], int, Pipe]] = []
    for y in range(mapping.cores_y):
        for x in range(mapping.cores_x):
            split = mapping.spatial_index(axis, y, x)
            if split == 0:
                continue
            oy, ox = owner_of(mapping, axis, (y, x))
            pipes.append(((oy, ox), split, Pipe((y, x), (oy, oy + 1), (ox, ox + 1))))
    return tuple(p for _, _, p in sorted(pipes, key=lambda t: (t[0], t[1])))


def all_cores(mapping: Mapping) -> tuple[tuple[int, int], ...]:
    return tuple((y, x) for y in range(mapping.cores_y) for x in range(mapping.cores_x))
