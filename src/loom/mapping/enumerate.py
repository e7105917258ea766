"""Enumerate the mapping candidates of a kernel on an architecture (stages 03–05).

candidates = consistent views (for every linear extension of the axis dominance order)
             x communication choices (multicast on or off per group of loads that
             depend on the same grid axes), plus a second engine realization of
             the variant whose split loads all multicast (both on the reader) and
             its twin storing one wave late, where the writer loads in a loop
             (`loom.mapping.engines`),
             keeping only views that give no grid axis
             more cores than it can have tiles, and whose split axes can be fully
             spatial (one block per core, the tile dividing the extent).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

from loom.arch import Arch
from loom.arch.noc import split_loads
from loom.ir.buffers import BufferedProgram
from loom.ir.candidate import AccessInfo, Candidate, CandidateSet
from loom.ir.schedule import Mapping
from loom.ir.tile import Gather, TileProgram, walk
from loom.mapping.engines import assign_engines, late_loads, stored_loop_loads
from loom.mapping.multicast import multicast_levels, plan_copy
from loom.mapping.reuse import analyze_accesses, reuse_flags
from loom.mapping.scores import axis_scores, linear_extensions
from loom.mapping.views import DimChoice, all_choices, build_mapping, consistent_choices
from loom.symbolic import ceildiv


def _short(axis: str) -> str:
    return axis.removeprefix("tile_")


def _max_tiles(program: TileProgram) -> dict[str, int]:
    return {a.tile.name: -(-a.extent // a.tile.bounds[0]) for a in program.grid}


def _gather_axes(program: TileProgram) -> tuple[str, ...]:
    return tuple(dict.fromkeys(op.across for op in walk(program.body) if isinstance(op, Gather)))


def _illegal(program: TileProgram, mapping: Mapping, gathers: tuple[str, ...]) -> str | None:
    """Why this view can never be legal, or None."""
    factors = {a.tile.name: mapping.spatial_factor(a.tile.name) for a in program.grid}
    return _illegal_factors(program, factors, gathers)


def _illegal_factors(
    program: TileProgram, factors: dict[str, int], gathers: tuple[str, ...]
) -> str | None:
    for axis in program.grid:
        name, factor = axis.tile.name, factors[axis.tile.name]
        lo, hi = axis.tile.bounds
        if -(-axis.extent // lo) < factor:
            return "more cores than tiles along an axis"
        if name in gathers and not any(
            t % axis.tile.align == 0 and axis.extent % t == 0 and axis.extent // t == factor
            for t in range(lo, hi + 1, axis.tile.align)
        ):
            return "split axis cannot be fully spatial"
    return None


class Enumerator:
    def __init__(self, buffered: BufferedProgram, arch: Arch) -> None:
        self.program = buffered.program
        self.buffered = buffered
        self.arch = arch
        self.axes = tuple(a.tile.name for a in self.program.grid)
        self.infos = analyze_accesses(self.program)
        self.gathers = _gather_axes(self.program)
        self.max_tiles = _max_tiles(self.program)
        self.split = split_loads(buffered)
        self.late = late_loads(buffered)
        self.stored = stored_loop_loads(buffered)

    def run(self) -> CandidateSet:
        scores = axis_scores(self.program, self.infos)
        orders = linear_extensions(scores, pinned_first=self.gathers)
        rejected: Counter[str] = Counter()
        views: dict[tuple[object, ...], tuple[Mapping, tuple[str, ...]]] = {}
        for order in orders:
            for x, y in itertools.product(
                consistent_choices(self.arch.grid_x, order),
                consistent_choices(self.arch.grid_y, order),
            ):
                mapping = build_mapping(x, y)
                if _illegal(self.program, mapping, self.gathers) is None:
                    views.setdefault(mapping.levels, (mapping, order))
        candidates = [
            c for mapping, order in views.values() for c in self._variants(mapping, order)
        ]
        total = self._count_legal(rejected)
        return CandidateSet(
            buffered=self.buffered,
            accesses=self.infos,
            scores=scores,
            orders=orders,
            candidates=tuple(sorted(candidates, key=lambda c: c.name)),
            candidates_total=total,
            rejected=dict(sorted(rejected.items())),
        )

    def _count_legal(self, rejected: Counter[str]) -> int:
        """Legal candidates before pruning, counted without building them.

        Legality depends on a view only through the cores it gives each axis, and the
        number of communication variants only through the axis of the innermost level
        of each dimension (which loads can multicast), so the dimension choices are
        grouped by that signature and the pairs of groups counted, with the second
        realization of the variant whose split loads all multicast and, where it always
        has one, its twin storing one wave late (`loom.mapping.engines`)."""

        def signature(choice: DimChoice) -> tuple[tuple[int, ...], str]:
            factors = tuple(
                math.prod(s for s, a in zip(choice.sizes, choice.axes, strict=True) if a == axis)
                for axis in self.axes
            )
            return factors, choice.axes[0] if choice.axes else ""

        xs = Counter(signature(c) for c in all_choices(self.arch.grid_x, self.axes))
        ys = Counter(signature(c) for c in all_choices(self.arch.grid_y, self.axes))
        total = 0
        split = {info.grid_axes for info in self.infos if info.op in self.split}
        for (fx, inner_x), nx in xs.items():
            for (fy, inner_y), ny in ys.items():
                factors = dict(
                    zip(self.axes, (a * b for a, b in zip(fx, fy, strict=True)), strict=True)
                )
                reason = _illegal_factors(self.program, factors, self.gathers)
                if reason:
                    rejected[reason] += nx * ny
                    continue
                groups = {
                    info.grid_axes
                    for info in self.infos
                    if info.kind == "load"
                    and any(inner and inner not in info.grid_axes for inner in (inner_x, inner_y))
                }
                # the variant with every split load multicast has a reader-only twin
                twin = 1 if split and split <= groups else 0
                # and one storing one wave late (the writer gets one of the split loads)
                late = twin if set(self.split) <= set(self.late) else 0
                total += nx * ny * (2 ** len(groups) + twin + late)
        return total

    def _comm_groups(self, mapping: Mapping) -> list[tuple[str, ...]]:
        """Groups of loads sharing a dependence pattern that can multicast here."""
        groups: dict[tuple[str, ...], None] = {}
        for info in self.infos:
            if info.kind == "load" and multicast_levels(info, mapping):
                groups[info.grid_axes] = None
        return list(groups)

    def _variants(self, mapping: Mapping, order: tuple[str, ...]) -> list[Candidate]:
        spatial = {a: mapping.spatial_factor(a) for a in self.axes}
        waves_possible = {a: self.max_tiles[a] > spatial[a] for a in self.axes}
        waves = {a.tile.name: ceildiv(a.num_tiles, spatial[a.tile.name]) for a in self.program.grid}
        groups = self._comm_groups(mapping)
        out: list[Candidate] = []
        for flags in itertools.product((False, True), repeat=len(groups)):
            on = {g for g, f in zip(groups, flags, strict=True) if f}
            copies = tuple(
                plan_copy(
                    info,
                    mapping,
                    reuse_flags(info, spatial, waves_possible),
                    info.grid_axes in on,
                    self.gathers[0] if self.gathers else "",
                )
                for info in self.infos
            )
            candidate = Candidate(
                name=self._name(mapping, copies),
                mapping=mapping,
                order=order,
                copies=copies,
                spatial=spatial,
                waves=waves,
                gather_axes=self.gathers,
            )
            out.extend(
                assign_engines(
                    self.buffered, candidate, self.arch, self.split, self.late, self.stored
                )
            )
        return out

    def _name(self, mapping: Mapping, copies: tuple[object, ...]) -> str:
        assign = (
            "_".join(f"{lv.dim}{lv.level}{_short(lv.axis)}" for lv in mapping.levels) or "single"
        )
        comm = []
        for c in copies:
            tag = {"unicast": "n", "multicast": "mc", "gather": "g"}[c.mode]  # type: ignore[attr-defined]
            if c.mode != "unicast":  # type: ignore[attr-defined]
                tag += f"{c.area[0]}x{c.area[1]}"  # type: ignore[attr-defined]
            comm.append(f"{c.tensor}-{tag}")  # type: ignore[attr-defined]
        return f"{self.program.name}__{mapping.label()}__{assign}__f01__{'_'.join(comm)}"


def enumerate_candidates(buffered: BufferedProgram, arch: Arch) -> CandidateSet:
    """All pruned mapping candidates of `buffered.program` on `arch`, in name order."""
    return Enumerator(buffered, arch).run()


__all__ = ["AccessInfo", "DimChoice", "enumerate_candidates"]
