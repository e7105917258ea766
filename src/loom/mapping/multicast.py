"""Rewrite reused loads as multicasts and split reductions as gathers (paper §2.5, stage 05).

A load that several cores need — its offsets do not depend on the axes of some mesh
levels — can be read from DRAM once per group and multicast to the group. A multicast
reaches a rectangle of cores, so along each dimension the group spans the innermost
levels up to the first level whose axis the access depends on (a contiguous run of
cores); outer independent levels read again in every group. Stores are always written
back by their owner (unicast). A `gather` sends the partial results of the cores along
the split axis to the group's owner (split-axis index 0).
"""

from __future__ import annotations

import math

from loom.ir.candidate import AccessInfo, CopyPlan, ReuseFlags
from loom.ir.program import CORE_X, CORE_Y
from loom.ir.schedule import Mapping, MeshLevel
from loom.symbolic import Expr, floordiv


def multicast_levels(access: AccessInfo, mapping: Mapping) -> tuple[MeshLevel, ...]:
    levels: list[MeshLevel] = []
    for dim in ("y", "x"):
        for lv in mapping.levels_of(dim):
            if lv.axis in access.grid_axes:
                break
            levels.append(lv)
    return tuple(levels)


def _area(levels: tuple[MeshLevel, ...]) -> tuple[int, int]:
    return (
        math.prod(lv.size for lv in levels if lv.dim == "y"),
        math.prod(lv.size for lv in levels if lv.dim == "x"),
    )


def _origin(coord: Expr, extent: int) -> Expr:
    return floordiv(coord, extent) * extent if extent > 1 else coord


def _rect(area: tuple[int, int]) -> str:
    y0, x0 = _origin(CORE_Y, area[0]), _origin(CORE_X, area[1])
    return f"UL: [{y0}, {x0}], LR: [{y0 + (area[0] - 1)}, {x0 + (area[1] - 1)}]"


def _label(levels: tuple[MeshLevel, ...]) -> tuple[str, ...]:
    return tuple(f"{lv.dim}{lv.level}" for lv in levels)


def plan_copy(
    access: AccessInfo, mapping: Mapping, reuse: ReuseFlags, multicast: bool, gather_axis: str
) -> CopyPlan:
    if access.kind == "gather":
        levels = mapping.axis_levels(gather_axis)
        return CopyPlan(
            access.op,
            access.tensor,
            "gather",
            "gather",
            _area(levels),
            f"owner: cores with {gather_axis} index 0 in " + _rect(_area(levels)),
            reuse,
            _label(levels),
        )
    if access.kind == "load" and multicast:
        levels = multicast_levels(access, mapping)
        area = _area(levels)
        if area != (1, 1):
            return CopyPlan(
                access.op,
                access.tensor,
                "load",
                "multicast",
                area,
                _rect(area),
                reuse,
                _label(levels),
            )
    region = f"UL: [{CORE_Y}, {CORE_X}], LR: [{CORE_Y}, {CORE_X}]"
    return CopyPlan(access.op, access.tensor, access.kind, "unicast", (1, 1), region, reuse)
