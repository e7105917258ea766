"""The values a tile size may take before the constraints filter them: one rule, read
by the problem's domains (`loom.model.build`) and by the terms that depend on a block's
width (`loom.model.transfers`)."""

from __future__ import annotations

from loom.symbolic import Sym


def tile_domain(sym: Sym, extent: int | None) -> tuple[int, ...]:
    """Multiples of the alignment that divide the extent (loops, split axes)."""
    values = sym.domain()
    if extent is not None:
        values = range(values.start, min(values.stop, extent + 1), values.step)
        return tuple(v for v in values if extent % v == 0)
    return tuple(values)


def wave_domain(sym: Sym, extent: int, cores: int) -> tuple[int, ...]:
    """For a padded grid axis: the smallest tile size for each number of waves."""
    values = sym.domain()
    kept: list[int] = []
    last_waves = None
    for t in range(values.start, min(values.stop, extent + values.step), values.step):
        tiles = -(-extent // t)
        waves = -(-tiles // cores)
        if waves != last_waves:
            kept.append(t)
            last_waves = waves
        if waves == 1:
            break
    return tuple(kept)


def grid_domain(sym: Sym, extent: int, cores: int, split: bool) -> tuple[int, ...]:
    """A grid axis's tile sizes: one per wave count over its `cores`, or, for an axis
    whose reduction is split over cores (gathered), the divisors as for a loop."""
    return tile_domain(sym, extent) if split else wave_domain(sym, extent, cores)
