"""Schedule: the contract between the compiler and everything after it.

Plain, JSON-serialisable data in which every solved value is named by its source
symbol. Lowering reads the mapping, copies, block sizes and pipeline knobs; reports read
the modeled figures. A hand-written schedule (e.g. TTNN's configuration for a published
matmul row) is a Schedule too, with the model fields left at zero.

Mesh conventions: the compute grid has columns `x` and rows `y`; a core is (y, x). A
*view* splits each physical dimension into levels, innermost (level 0) first; the core
coordinate along a dimension is the mixed-radix number of its level indices. Every level
is assigned to one grid axis; an axis's spatial index is the mixed-radix number of its
levels taken in (level, dim) order, least significant first. The rest of the axis runs
temporally: ``logical tile = spatial index + wave * spatial factor``. A schedule may deal
its blocks otherwise (`Schedule.deal`, `DEALS`): the mapping then only names the cores.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from loom.errors import ScheduleError

SCHEDULE_VERSION = 1

DEALS = {
    "": "each grid axis over its mapping's levels, waves round-robin (spatial index + wave x "
    "spatial factor)",
    "zigzag": "the blocks of every grid axis flattened (outer axes outermost) and dealt to "
    "the mapping's cores in contiguous runs of ceil(blocks / cores), core (y, x) taking run "
    "y x cores_x + x; the innermost axis visits its blocks in zigzag order (0, N-1, 1, N-2, "
    "...), so a run pairs light and heavy causal blocks; the runs past the last block are "
    "padding, at the innermost axis's first block",
}
"""How a schedule hands its grid blocks to the cores (`Schedule.deal`). ``zigzag`` is
TTNN's SDPA deal (`loom.baselines.ttnn_sdpa`); the lowering writes it
(`loom.ir.deal.dealt_indices`)."""


@dataclass(frozen=True)
class MeshLevel:
    dim: str  # "x" | "y"
    level: int  # 0 = innermost
    size: int
    axis: str  # tile symbol of the grid axis this level serves


@dataclass(frozen=True)
class Mapping:
    levels: tuple[MeshLevel, ...]
    """All levels, sorted by (level, dim); sizes multiply to the cores used per dim."""

    def cores(self, dim: str) -> int:
        n = 1
        for lv in self.levels:
            if lv.dim == dim:
                n *= lv.size
        return n

    @property
    def cores_x(self) -> int:
        return self.cores("x")

    @property
    def cores_y(self) -> int:
        return self.cores("y")

    @property
    def num_cores(self) -> int:
        return self.cores_x * self.cores_y

    def spatial_factor(self, axis: str) -> int:
        n = 1
        for lv in self.levels:
            if lv.axis == axis:
                n *= lv.size
        return n

    def levels_of(self, dim: str) -> tuple[MeshLevel, ...]:
        return tuple(sorted((lv for lv in self.levels if lv.dim == dim), key=lambda v: v.level))

    def stride(self, level: MeshLevel) -> int:
        """Core-coordinate stride of one step of `level` along its physical dim."""
        s = 1
        for lv in self.levels_of(level.dim):
            if lv.level < level.level:
                s *= lv.size
        return s

    def axis_levels(self, axis: str) -> tuple[MeshLevel, ...]:
        return tuple(lv for lv in self.levels if lv.axis == axis)

    def radix(self, level: MeshLevel) -> int:
        """Weight of one step of `level` in its axis's spatial index."""
        r = 1
        for lv in self.axis_levels(level.axis):
            if lv == level:
                return r
            r *= lv.size
        raise KeyError(level)

    def spatial_index(self, axis: str, core_y: int, core_x: int) -> int:
        index = 0
        for dim, stride, size, radix in _index_digits(self, axis):
            index += (core_x if dim == "x" else core_y) // stride % size * radix
        return index

    def label(self) -> str:
        """Short text such as `x8_y2y4` (factors per dim, innermost first)."""
        parts = []
        for dim in ("x", "y"):
            parts.append("".join(f"{dim}{lv.size}" for lv in self.levels_of(dim)) or f"{dim}1")
        return "_".join(parts)


@functools.cache
def _index_digits(mapping: Mapping, axis: str) -> tuple[tuple[str, int, int, int], ...]:
    """(dim, stride, size, radix) of each level of `axis`: what `Mapping.spatial_index`
    reads, asked for every core of every candidate while the model is built."""
    return tuple(
        (lv.dim, mapping.stride(lv), lv.size, mapping.radix(lv)) for lv in mapping.axis_levels(axis)
    )


@dataclass(frozen=True)
class Copy:
    """How one load or store of the TileProgram moves data.

    `op` identifies the TileProgram access (its position among the loads, stores and
    gathers in walk order) and `tensor` its DRAM tensor. `mode` is `unicast`,
    `multicast` (the data is read once per group and sent to `area` cores) or `gather`
    (partials of a split reduction sent to the owning core). `area` is the group size
    along (y, x); `region` describes the group rectangle in words/expressions.
    """

    op: int
    tensor: str
    kind: str  # "load" | "store" | "gather"
    mode: str  # "unicast" | "multicast" | "gather"
    area: tuple[int, int] = (1, 1)
    region: str = ""
    multicast_dims: tuple[str, ...] = ()
    engine: str = ""
    """For a load: the engine that issues it ("reader" on NoC0, "writer" on NoC1), as the
    latency model charged it; "" keeps the buffer plan's."""


@dataclass(frozen=True)
class TopEntry:
    candidate: str
    block_sizes: dict[str, int]
    pipeline: dict[str, dict[str, int]]
    modeled_cycles: int


REALIZATION_NOTE = "realization "
"""The prefix of the note naming a kernel's realization (`Schedule.realization_note`)."""


@dataclass(frozen=True)
class Schedule:
    kernel: str
    arch: str
    shape: dict[str, int]
    dtype: str
    math_fidelity: str
    candidate: str
    mapping: Mapping
    copies: tuple[Copy, ...]
    block_sizes: dict[str, int]
    pipeline: dict[str, dict[str, int]]
    """Pipe node (e.g. `loop:tile_k`) -> {"b_load": 0|1, "b_store": 0|1}."""
    l1_bytes: int = 0
    l1_capacity_bytes: int = 0
    modeled_cycles: int = 0
    modeled_us: float = 0.0
    modeled_tflops: float = 0.0
    modeled_dram_bytes: int = 0
    """DRAM bytes the model moves for this schedule (reads, re-reads and writes)."""
    modeled_dram_gbps: float = 0.0
    """`modeled_dram_bytes` over the modeled time."""
    bottleneck: dict[str, str] = field(default_factory=dict)
    binding_constraints: tuple[str, ...] = ()
    top_k: tuple[TopEntry, ...] = ()
    neighbourhood: dict[str, Any] = field(default_factory=dict)
    candidates_total: int = 0
    candidates_after_pruning: int = 0
    candidates_feasible: int = 0
    compile_seconds: float = 0.0
    waves: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    formats: str = ""
    """The user's data formats (``--dtype``: a default, ``arg=format`` overrides and
    ``acc=format``); empty keeps the kernel source's dtypes. `dtype` is the first
    argument's resulting format."""
    accumulators: dict[str, str] = field(default_factory=dict)
    """Matmul accumulator (its state allocation) -> where it lives: one of
    `loom.ir.buffers.PLACEMENTS`; an accumulator not named here is ``separate``."""
    realization: str = ""
    """``looped`` when the kernel's full-extent reduction dim runs as inner loops over
    chunks (`loom.dataflow.looped_rows`; the chunk size is in `block_sizes`, the sentence
    in `notes`); empty for the program as written."""
    buffering: str = ""
    """``apart`` when a store pass loads a tensor that an earlier pass loads on the writer
    into a buffer of its own (`loom.dataflow.concretize.unshare_stored_loads`), so the
    two passes' loads may take different engines; empty: one shared buffer."""
    deal: str = ""
    """How the grid blocks are dealt to the cores: a `DEALS` key; empty (Loom's own
    schedules): round-robin over each axis's levels."""

    @property
    def realization_note(self) -> str:
        """The sentence saying which realization of a full-extent row runs (empty for a
        kernel that has only one)."""
        notes = (n for n in self.notes if n.startswith(REALIZATION_NOTE))
        return next(notes, "").removeprefix(REALIZATION_NOTE)

    def to_json(self) -> str:
        data = asdict(self)
        if not self.accumulators:
            del data["accumulators"]
        if not self.realization:
            del data["realization"]
        if not self.deal:
            del data["deal"]
        if not self.buffering:
            del data["buffering"]
        data["version"] = SCHEDULE_VERSION
        data["mapping"]["cores"] = [self.mapping.cores_y, self.mapping.cores_x]
        data["mapping"]["view"] = self.mapping.label()
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def grid_waves(
    extents: dict[str, int], mapping: Mapping, block_sizes: dict[str, int], deal: str = ""
) -> dict[str, int]:
    """Temporal waves of each grid axis (tile symbol -> extent): its blocks over its cores.

    The mapping derives the same count symbolically for every candidate
    (:class:`loom.ir.candidate.Candidate` ``waves``); this is the number for a schedule
    built without a candidate (a baseline's policy, a block-size neighbour), and the
    check that a schedule file's ``waves`` agree with its block sizes. Under the
    ``zigzag`` deal (`DEALS`) the innermost axis (the last of `extents`) counts a core's
    run, every other axis one wave."""
    if deal not in DEALS:
        raise ScheduleError(
            f"the schedule deals its blocks {deal!r}, which Loom does not know; set `deal` to "
            f"one of {', '.join(repr(d) for d in DEALS)}."
        )
    if deal:
        counts = [-(-extent // block_sizes[axis]) for axis, extent in extents.items()]
        run = -(-math.prod(counts) // mapping.num_cores)
        return {axis: run if i == len(counts) - 1 else 1 for i, axis in enumerate(extents)}
    waves = {}
    for axis, extent in extents.items():
        blocks = -(-extent // block_sizes[axis])
        waves[axis] = -(-blocks // mapping.spatial_factor(axis))
    return waves


def schedule_from_dict(data: dict[str, Any]) -> Schedule:
    """Rebuild a Schedule from its JSON form (raises KeyError/TypeError when malformed)."""
    mapping_data = data["mapping"]
    mapping = Mapping(tuple(MeshLevel(**lv) for lv in mapping_data["levels"]))
    copies = tuple(
        Copy(
            **{
                **c,
                "area": tuple(c.get("area", (1, 1))),
                "multicast_dims": tuple(c.get("multicast_dims", ())),
            }
        )
        for c in data.get("copies", ())
    )
    top_k = tuple(TopEntry(**t) for t in data.get("top_k", ()))
    known = {f.name for f in fields(Schedule)}
    rest = {k: v for k, v in data.items() if k in known and k not in {"mapping", "copies", "top_k"}}
    for key in ("binding_constraints", "notes"):
        if key in rest:
            rest[key] = tuple(rest[key])
    return Schedule(mapping=mapping, copies=copies, top_k=top_k, **rest)
