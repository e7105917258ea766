"""Hand-built Schedules and cached kernel imports for the lowering and backend tests.

The solver is not part of these tests: a schedule is written down directly from a view
(levels per physical dim, innermost first, each serving a grid axis), block sizes,
pipeline knobs and the tensors to multicast. Multicast areas follow the Schedule
convention: along each dim, the innermost levels whose axis the load does not depend on.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable

from loom.ir.schedule import Copy, Mapping, MeshLevel, Schedule
from loom.ir.tile import Gather, Load, Store, TileProgram, accesses

View = dict[str, list[tuple[int, str]]]
"""dim ("x" | "y") -> [(size, axis tile symbol), ...], innermost level first."""


@functools.cache
def kernel_program(kernel: str, shape: tuple[tuple[str, int], ...]) -> TileProgram:
    """The TileProgram of a shipped kernel on one shape (Helion import, cached)."""
    from loom.frontend import import_kernel

    module = importlib.import_module(f"loom.kernels.{kernel}")
    return import_kernel(getattr(module, kernel), module.make_inputs(dict(shape)))


def mapping_of(view: View) -> Mapping:
    levels = [
        MeshLevel(dim, i, size, axis)
        for dim in ("x", "y")
        for i, (size, axis) in enumerate(view.get(dim, []))
    ]
    return Mapping(tuple(sorted(levels, key=lambda lv: (lv.level, lv.dim))))


def _depends(tile: TileProgram, op: Load) -> set[str]:
    names = set().union(*(w.offset.free_names() for w in op.window))
    return {a.tile.name for a in tile.grid if a.index.name in names}


def multicast_area(tile: TileProgram, mapping: Mapping, op: Load) -> tuple[int, int]:
    dep = _depends(tile, op)
    area = {}
    for dim in ("y", "x"):
        n = 1
        for lv in mapping.levels_of(dim):
            if lv.axis in dep:
                break
            n *= lv.size
        area[dim] = n
    return (area["y"], area["x"])


def split_area(mapping: Mapping, axis: str) -> tuple[int, int]:
    sizes = {"y": 1, "x": 1}
    for lv in mapping.axis_levels(axis):
        sizes[lv.dim] *= lv.size
    return (sizes["y"], sizes["x"])


def make_copies(tile: TileProgram, mapping: Mapping, multicast: Iterable[str]) -> tuple[Copy, ...]:
    mcast = set(multicast)
    copies = []
    for i, op in enumerate(accesses(tile.body)):
        if isinstance(op, Load):
            area = multicast_area(tile, mapping, op) if op.tensor in mcast else (1, 1)
            mode = "multicast" if area != (1, 1) else "unicast"
            copies.append(Copy(i, op.tensor, "load", mode, area))
        elif isinstance(op, Store):
            copies.append(Copy(i, op.tensor, "store", "unicast"))
        elif isinstance(op, Gather):
            area = split_area(mapping, op.across)
            copies.append(Copy(i, op.operand.name, "gather", "gather", area))
    return tuple(copies)


def make_schedule(
    tile: TileProgram,
    arch: str,
    view: View,
    block_sizes: dict[str, int],
    pipeline: dict[str, dict[str, int]] | None = None,
    multicast: Iterable[str] = (),
) -> Schedule:
    mapping = mapping_of(view)
    waves = {}
    for axis in tile.grid:
        tiles = -(-axis.extent // block_sizes[axis.tile.name])
        waves[axis.tile.name] = -(-tiles // mapping.spatial_factor(axis.tile.name))
    return Schedule(
        kernel=tile.name,
        arch=arch,
        shape={},
        dtype="bf16",
        math_fidelity="HiFi4",
        candidate=f"{tile.name}__{mapping.label()}",
        mapping=mapping,
        copies=make_copies(tile, mapping, multicast),
        block_sizes=dict(block_sizes),
        pipeline=dict(pipeline or {}),
        waves=waves,
    )
