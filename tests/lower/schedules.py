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
from dataclasses import replace

from loom.baselines.build import copies_of
from loom.ir.schedule import Copy, Mapping, MeshLevel, Schedule
from loom.ir.tile import TileProgram

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


def make_copies(tile: TileProgram, mapping: Mapping, multicast: Iterable[str]) -> tuple[Copy, ...]:
    return copies_of(tile, mapping, multicast)


def make_schedule(
    tile: TileProgram,
    arch: str,
    view: View,
    block_sizes: dict[str, int],
    pipeline: dict[str, dict[str, int]] | None = None,
    multicast: Iterable[str] = (),
    engines: dict[str, str] | None = None,
) -> Schedule:
    """`engines` names the engine of some loads by tensor (the rest: the plan's choice)."""
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
        copies=tuple(
            replace(c, engine=engines[c.tensor]) if c.tensor in (engines or {}) else c
            for c in make_copies(tile, mapping, multicast)
        ),
        block_sizes=dict(block_sizes),
        pipeline=dict(pipeline or {}),
        waves=waves,
    )
