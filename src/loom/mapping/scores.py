"""Axis scores and dominance pruning (paper §2.5, "spatial-reuse-aware pruning").

Each grid axis is scored by (parallel extent, reuse volume, reuse access count): its
extent, and the total size and number of the accesses whose offsets do not depend on it
(data that cores spread along this axis could share). An axis is ordered behind another
only when dominated in all three; only linear extensions of that partial order are
enumerated. An axis carrying a split reduction (a gather) is pinned first so that its
cores are neighbours on the mesh.
"""

from __future__ import annotations

import itertools

from loom.ir.candidate import AccessInfo, AxisScore
from loom.ir.tile import TileProgram


def axis_scores(program: TileProgram, infos: tuple[AccessInfo, ...]) -> tuple[AxisScore, ...]:
    scores = []
    for axis in program.grid:
        name = axis.tile.name
        independent = [a for a in infos if a.kind != "gather" and name not in a.grid_axes]
        scores.append(
            AxisScore(
                axis=name,
                parallel_extent=axis.extent,
                reuse_volume=sum(a.elements for a in independent),
                reuse_count=len(independent),
            )
        )
    return tuple(scores)


def linear_extensions(
    scores: tuple[AxisScore, ...], pinned_first: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], ...]:
    """Orders of the axes (highest priority first) consistent with dominance."""
    names = [s.axis for s in scores]
    by_name = {s.axis: s for s in scores}
    orders = []
    for perm in itertools.permutations(names):
        position = {a: i for i, a in enumerate(perm)}
        if any(position[p] != i for i, p in enumerate(pinned_first)):
            continue
        if all(
            position[a] < position[b]
            for a in names
            for b in names
            if a != b and by_name[a].dominates(by_name[b]) and b not in pinned_first
        ):
            orders.append(perm)
    return tuple(orders)
