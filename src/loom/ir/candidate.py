"""Candidates: discrete spatial-mapping and communication choices (paper §2.5, stages 03–05).

A candidate fixes how the grid is laid out on the core mesh (a `Mapping`: which mesh
levels serve which grid axis) and how every access moves data (unicast, multicast over a
group of cores, or a gather of partial results). Block sizes and pipeline knobs stay
symbolic: the candidate describes choices, not solved values.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.ir.buffers import BufferedProgram
from loom.ir.schedule import Mapping
from loom.symbolic import Expr


@dataclass(frozen=True)
class ReuseFlags:
    """Whether the same data is read again: by another core (`spatial`), by the same
    core in a later wave (`temporal`), or in a later iteration of an enclosing
    sequential loop (`sequential`). Derived from which loop indices the access's
    offsets depend on — never from the kernel's name."""

    spatial: bool
    temporal: bool
    sequential: bool

    def __str__(self) -> str:
        return (
            f"[seq = {str(self.sequential).lower()}, spat = {str(self.spatial).lower()}, "
            f"temp = {str(self.temporal).lower()}]"
        )


@dataclass(frozen=True)
class AccessInfo:
    """What an access (load, store or gather) depends on."""

    op: int
    tensor: str
    kind: str  # "load" | "store" | "gather"
    grid_axes: tuple[str, ...]
    """Grid axes (tile symbol names) whose tile index appears in the offsets."""
    loops: tuple[str, ...]
    """Enclosing sequential loops (tile symbol names)."""
    loop_deps: tuple[str, ...]
    """The enclosing loops whose index appears in the offsets."""
    elements: int
    """Elements of the whole DRAM tensor (the reuse volume it contributes)."""


@dataclass(frozen=True)
class CopyPlan:
    """How one access moves data in a candidate.

    For a multicast, `area` = (cores along y, cores along x) of each group and `region`
    gives its upper-left / lower-right corners as expressions of the core coordinates.
    A gather sends the partials of the cores of a group to the group's owner."""

    op: int
    tensor: str
    kind: str
    mode: str  # "unicast" | "multicast" | "gather"
    area: tuple[int, int]
    region: str
    reuse: ReuseFlags
    levels: tuple[str, ...] = ()
    """Mesh levels the group spans, e.g. ("x0", "y0")."""
    engine: str = ""
    """For a load: the data-movement engine ("reader" on NoC0, "writer" on NoC1) that
    issues it, chosen by the mapping stage from the NoC link loads; "" leaves the buffer
    plan's choice."""


@dataclass(frozen=True)
class AxisScore:
    axis: str
    parallel_extent: int
    reuse_volume: int
    reuse_count: int

    def dominates(self, other: AxisScore) -> bool:
        mine = (self.parallel_extent, self.reuse_volume, self.reuse_count)
        theirs = (other.parallel_extent, other.reuse_volume, other.reuse_count)
        return all(a >= b for a, b in zip(mine, theirs, strict=True)) and mine != theirs


@dataclass(frozen=True)
class Candidate:
    name: str
    mapping: Mapping
    order: tuple[str, ...]
    """Axis priority the mapping was built from (inner mesh levels go first)."""
    copies: tuple[CopyPlan, ...]
    spatial: dict[str, int]
    """Spatial factor of every grid axis (cores along it)."""
    waves: dict[str, Expr]
    """Temporal waves of every grid axis: ceildiv(tile count, spatial factor)."""
    gather_axes: tuple[str, ...] = ()
    stores_late: bool = False
    """The writer, which also loads inside the grid body, stores each wave's result one
    wave late, into a double store block (the grid's b_store knob fixed at 1; named
    `__sl`, `loom.mapping.engines`); False: in program order, one store block."""

    @property
    def num_cores(self) -> int:
        return self.mapping.num_cores


@dataclass(frozen=True)
class CandidateSet:
    buffered: BufferedProgram
    accesses: tuple[AccessInfo, ...]
    scores: tuple[AxisScore, ...]
    orders: tuple[tuple[str, ...], ...]
    """Linear extensions of the dominance order that were enumerated."""
    candidates: tuple[Candidate, ...]
    candidates_total: int
    """Legal candidates before dominance pruning."""
    rejected: dict[str, int]
    """Why views were discarded before pruning (reason -> count)."""
