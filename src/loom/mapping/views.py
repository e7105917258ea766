"""Logical views of the core mesh (paper §2.5, "topology-aware mapping").

Each physical dimension of the mesh is split into levels — an ordered factorization of
the number of cores used along it, innermost level first — and every level is given to
one grid axis. A sub-mesh may use fewer cores than the dimension has: any even number,
or all of them (the occupancy choices of the reference implementation). The core
coordinate along a dimension is the mixed-radix number of its level indices, so an axis
on the innermost level of a dimension changes fastest between neighbouring cores.

Under an axis order (highest priority first), a view is *consistent* when along every
dimension the axes of the levels appear in strictly decreasing priority from the
innermost level out: at most one level per axis and dimension, higher priority inside.
Any other assignment is legal too (the same axis may take several non-adjacent levels);
those are counted but pruned.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from loom.ir.schedule import Mapping, MeshLevel


@dataclass(frozen=True)
class DimChoice:
    sizes: tuple[int, ...]  # innermost first
    axes: tuple[str, ...]


@cache
def ordered_factorizations(n: int) -> tuple[tuple[int, ...], ...]:
    """All ordered tuples of factors >= 2 whose product is n (() for n == 1)."""
    if n == 1:
        return ((),)
    out: list[tuple[int, ...]] = []
    for first in range(2, n + 1):
        if n % first == 0:
            out.extend((first, *rest) for rest in ordered_factorizations(n // first))
    return tuple(out)


def occupancies(limit: int) -> tuple[int, ...]:
    """Cores used along a dimension of `limit` cores: 1, every even number, or all."""
    return tuple(sorted({1, limit, *range(2, limit + 1, 2)}))


def consistent_choices(limit: int, order: tuple[str, ...]) -> Iterator[DimChoice]:
    """Pruned choices for one dimension of `limit` cores under an axis order."""
    for used in occupancies(limit):
        for sizes in ordered_factorizations(used):
            for axes in itertools.combinations(order, len(sizes)):
                yield DimChoice(sizes, axes)


def all_choices(limit: int, axes: tuple[str, ...]) -> Iterator[DimChoice]:
    """Every legal choice for one dimension (adjacent levels serve different axes)."""
    for used in occupancies(limit):
        for sizes in ordered_factorizations(used):
            for assign in itertools.product(axes, repeat=len(sizes)):
                if all(a != b for a, b in itertools.pairwise(assign)):
                    yield DimChoice(sizes, assign)


def build_mapping(x: DimChoice, y: DimChoice) -> Mapping:
    levels = [MeshLevel("x", i, s, a) for i, (s, a) in enumerate(zip(x.sizes, x.axes, strict=True))]
    levels += [
        MeshLevel("y", i, s, a) for i, (s, a) in enumerate(zip(y.sizes, y.axes, strict=True))
    ]
    levels.sort(key=lambda lv: (lv.level, lv.dim))
    return Mapping(tuple(levels))


def spatial_factors(mapping: Mapping, axes: tuple[str, ...]) -> dict[str, int]:
    return {a: mapping.spatial_factor(a) for a in axes}
