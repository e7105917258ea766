"""Reuse analysis: which loop indices each access depends on (paper §2.5, stage 04).

An access whose offsets do not depend on a loop's index reads the same data in every
iteration of that loop: across the cores of a spatial loop (spatial reuse), across the
waves of a temporal loop (temporal reuse) or across iterations of a sequential loop
(sequential reuse). The flags follow from the offset expressions alone.
"""

from __future__ import annotations

import math

from loom.ir.candidate import AccessInfo, ReuseFlags
from loom.ir.tile import Gather, Load, TileProgram, accesses, loops_enclosing


def analyze_accesses(program: TileProgram) -> tuple[AccessInfo, ...]:
    infos = []
    for position, op in enumerate(accesses(program.body)):
        loops = loops_enclosing(program.body, op) or ()
        if isinstance(op, Gather):
            grid = tuple(a.tile.name for a in program.grid if a.tile.name != op.across)
            infos.append(AccessInfo(position, op.operand.name, "gather", grid, (), (), 0))
            continue
        names = frozenset().union(*(w.offset.free_names() for w in op.window))
        # a loop whose trip count moves with a grid tile (causal attention) runs a
        # different number of accesses on each tile: no sharing across that axis
        names |= frozenset().union(*(lp.trip_count.free_names() for lp in loops))
        grid = tuple(a.tile.name for a in program.grid if a.index.name in names)
        loop_deps = tuple(lp.tile.name for lp in loops if lp.index.name in names)
        tensor = program.arg(op.tensor)
        infos.append(
            AccessInfo(
                op=position,
                tensor=op.tensor,
                kind="load" if isinstance(op, Load) else "store",
                grid_axes=grid,
                loops=tuple(lp.tile.name for lp in loops),
                loop_deps=loop_deps,
                elements=math.prod(tensor.shape),
            )
        )
    return tuple(infos)


def reuse_flags(
    access: AccessInfo, spatial: dict[str, int], may_have_waves: dict[str, bool]
) -> ReuseFlags:
    """Reuse of `access` under a mapping with these spatial factors per grid axis."""
    independent = [a for a in spatial if a not in access.grid_axes]
    return ReuseFlags(
        spatial=any(spatial[a] > 1 for a in independent),
        temporal=any(may_have_waves[a] for a in independent),
        sequential=any(lp not in access.loop_deps for lp in access.loops),
    )
