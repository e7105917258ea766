"""Virtual buffers and their physical allocations (paper §2.3–2.4, stages 01–02).

Reification turns every tile value handed from one engine to another (or kept across
loop iterations, or read by several operations) into a *virtual buffer* with explicit
producer/consumer protocol: the producer reserves writable space and commits readable
data; the consumer acquires readable data and releases it. Concretization then binds
virtual buffers to physical L1 allocations, letting buffers with disjoint lifetimes,
the same block shape and the same producer and consumer engines share storage.

Sizes stay symbolic: a block holds `layout.tiles` tiles, an expression of the tile
symbols, so the model can charge the L1 footprint as a function of the block sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from loom.ir.geometry import TILE
from loom.ir.scope import Scope
from loom.ir.tile import Load, TileProgram, accesses, loops_enclosing, walk
from loom.symbolic import Const, Expr, ceildiv, mul

TILE_DIM = TILE

ROLES = ("load", "store", "state", "compute", "gather_out", "gather_in")
"""Buffer roles. `load`/`store` move DRAM data in/out and are doubled by the pipeline
knobs; `state` holds a loop-carried value (read from one block, written to the next, so
it always has two blocks); `compute` holds a value read by several operations;
`gather_out`/`gather_in` carry partial results of a split reduction."""


@dataclass(frozen=True)
class TileLayout:
    """How a value's elements sit in 32x32 tiles.

    The last two dims of a value are the tile rows and columns, the leading dims form a
    batch. A *row vector* (the result of a row reduction, or `x[..., None]` of one) has
    one column of tiles with its values in column 0 of each tile.
    """

    batch: Expr
    rows: Expr
    cols: Expr
    vector: bool = False

    @cached_property
    def tile_rows(self) -> Expr:
        return mul(self.batch, ceildiv(self.rows, TILE_DIM))

    @cached_property
    def tile_cols(self) -> Expr:
        return ceildiv(self.cols, TILE_DIM)

    @cached_property
    def tiles(self) -> Expr:
        return mul(self.tile_rows, self.tile_cols)

    def __str__(self) -> str:
        kind = "vector " if self.vector else ""
        return f"{kind}[{self.batch}] x {self.rows} x {self.cols}"


@dataclass(frozen=True)
class VirtualBuffer:
    name: str
    values: tuple[str, ...]
    """SSA values living in this buffer (a carried value's init, iter, next, result)."""
    role: str
    producer: str  # engine: "reader" | "compute" | "writer"
    consumer: str
    layout: TileLayout
    dtype: str
    scope: Scope
    """Pipe node whose knobs may double it: the grid body or one tile loop."""
    tensor: str = ""
    birth: int = 0
    death: int = 0

    @property
    def base_depth(self) -> int:
        return 2 if self.role == "state" else 1


@dataclass(frozen=True)
class Allocation:
    """Physical L1 storage shared by one or more virtual buffers."""

    name: str
    buffers: tuple[str, ...]
    layout: TileLayout
    dtype: str
    role: str
    scope: Scope
    base_depth: int

    @property
    def tiles(self) -> Expr:
        return self.layout.tiles


PLACEMENTS = ("separate", "l1", "output")
"""Where a matmul accumulator lives; a placement's index is the value of its knob.

* ``separate``: its own state buffer of two blocks in its own format (fp32): each step
  reads one block and writes the other;
* ``l1``: one block in its own format, held across the reduction loop; the packer adds
  every step's product into it (packer L1 accumulation, a read-modify-write of L1);
* ``output``: the output's store block, in the output's format (bf16): the partial sums
  are rounded to that format after every step (TTNN with fp32_dest_acc_en=False and
  packer_l1_acc=True). A precision relaxation: offered only under the ``output``
  accumulation policy (`loom compile --accumulate output`)."""

ACC_KNOB = "acc_"
"""Prefix of an accumulator's placement knob (followed by its state allocation)."""

ACCUMULATE_POLICIES = ("strict", "output")
"""`strict`: accumulators keep the format the kernel gives them (placements separate, l1);
`output`: they may also accumulate in the output's format (placement output)."""


@dataclass(frozen=True)
class Accumulator:
    """A loop-carried matmul accumulator (`acc = acc + a @ b` over a reduction loop,
    started by a fill and only stored after the loop) and where it may live."""

    state: str
    """Its state allocation (two blocks when ``separate``)."""
    store: str
    """The store allocation that receives its final value ('' when none can hold it)."""
    scope: Scope
    placements: tuple[str, ...]
    """The placements it may take, a prefix of PLACEMENTS."""

    @property
    def knob(self) -> str:
        """Name of its placement knob (values: indices into PLACEMENTS)."""
        return f"{ACC_KNOB}{self.state}"


def state_depth(placement: str) -> int:
    """Blocks of the accumulator's own state buffer under `placement` (2, 1 or 0)."""
    return 2 - PLACEMENTS.index(placement)


@dataclass(frozen=True)
class BufferedProgram:
    program: TileProgram
    layouts: dict[str, TileLayout]
    """Tile layout of every SSA value, by name."""
    buffers: tuple[VirtualBuffer, ...]
    allocations: tuple[Allocation, ...]
    inlined: tuple[str, ...]
    """Values computed inside the expression of their single consumer (no buffer)."""
    rebuilt: dict[str, int] = field(default_factory=dict)
    """Values the lowering evaluates this many more times than once (a stored value that
    other ops read is rebuilt inline in each of their statements, `dataflow.reify`)."""
    scopes: tuple[Scope, ...] = ()
    """Every scope that holds a buffer, with the load and store buffers it owns."""
    accumulators: tuple[Accumulator, ...] = ()
    """The matmul accumulators whose placement the schedule chooses."""

    def accumulator(self, state: str) -> Accumulator | None:
        """The accumulator whose state allocation is `state`, if any."""
        for acc in self.accumulators:
            if acc.state == state:
                return acc
        return None

    def buffer_of(self, value: str) -> VirtualBuffer | None:
        for vb in self.buffers:
            if value in vb.values:
                return vb
        return None

    def scope(self, scope: Scope) -> Scope:
        """`scope` with the buffers it owns (itself when it owns none)."""
        for s in self.scopes:
            if s == scope:
                return s
        return scope

    def allocation_of(self, buffer: str) -> Allocation:
        for alloc in self.allocations:
            if buffer in alloc.buffers:
                return alloc
        raise KeyError(buffer)

    def allocation_of_name(self, name: str) -> Allocation:
        for alloc in self.allocations:
            if alloc.name == name:
                return alloc
        raise KeyError(name)

    def load_allocations(self) -> dict[int, str]:
        """Access index (`loom.ir.tile.accesses`) -> the allocation its load fills, for
        every load into a load buffer. An allocation is one circular buffer, with a
        single producer: all its loads are issued by one engine."""
        owner = {b: a.name for a in self.allocations for b in a.buffers}
        out: dict[int, str] = {}
        for i, op in enumerate(accesses(self.program.body)):
            vb = self.buffer_of(op.result.name) if isinstance(op, Load) else None
            if vb is not None and vb.role == "load":
                out[i] = owner.get(vb.name, vb.name)
        return out

    def l1_terms(self) -> tuple[tuple[Allocation, Expr], ...]:
        """(allocation, tiles per block) pairs; bytes = tiles x tile bytes x depth."""
        return tuple((a, a.tiles) for a in self.allocations)


def load_loops(program: TileProgram) -> dict[str, int]:
    """Each loaded value -> the innermost loop around its load (by id, 0 for the grid
    body)."""
    loop_of: dict[str, int] = {}
    for op in walk(program.body):
        if isinstance(op, Load):
            loops = loops_enclosing(program.body, op) or ()
            loop_of[op.result.name] = id(loops[-1]) if loops else 0
    return loop_of


def allocation_loops(
    program: TileProgram, buffers: tuple[VirtualBuffer, ...], allocations: tuple[Allocation, ...]
) -> dict[str, tuple[int, ...]]:
    """The loops (by id, 0 for the grid body) whose loads fill each allocation, in program
    order: one, unless sequential loops load one tensor into a shared allocation (the two
    key loops of causal attention, a looped row's statistics and store passes)."""
    loop_of = load_loops(program)
    values = {vb.name: vb.values for vb in buffers}
    return {
        a.name: tuple(
            dict.fromkeys(loop_of[v] for b in a.buffers for v in values[b] if v in loop_of)
        )
        or (0,)
        for a in allocations
    }


def load_streams(
    program: TileProgram, buffers: tuple[VirtualBuffer, ...], allocations: tuple[Allocation, ...]
) -> tuple[tuple[Allocation, ...], ...]:
    """The load allocations grouped by the loads that stream at once: those of one loop
    (the grid body's, or one tile loop's, whose iterations overlap: the next K is fetched
    while V is used). A scope is named by its block symbol, so the passes of a looped row
    (`loom.dataflow.looped_rows`: a statistics loop, then the store loop, over the same
    chunk) are one scope but two loops, one after the other: their loads never share the
    links, and the engine that loads one pass is free in the other. An allocation that
    sequential loops share belongs to the stream of its first loop (`allocation_loops`)."""
    loops = allocation_loops(program, buffers, allocations)
    streams: dict[tuple[Scope, int], list[Allocation]] = {}
    for alloc in allocations:
        if alloc.role == "load":
            loop = loops[alloc.name][0]
            streams.setdefault((alloc.scope, loop), []).append(alloc)
    return tuple(tuple(group) for group in streams.values())


ONE = Const(1)
