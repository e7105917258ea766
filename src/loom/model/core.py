"""What every term family of the HEG reads: one candidate's program, copies and arch,
the state the families share while one graph is built, and the pipeline knobs.

The term families (`transfers`, `compute`, `reductions`, `banks`, `stores`, `slots`,
`steady`) each extend `HegCore`, importing one way down to it, and `heg.HegBuilder`
joins them to build the graph.
"""

from __future__ import annotations

import functools
import math

from loom.arch import Arch
from loom.ir.buffers import Accumulator, BufferedProgram, TileLayout
from loom.ir.candidate import Candidate, CopyPlan
from loom.ir.deal import busiest_mean_index, triangular_indices
from loom.ir.problem import Pipe, Term
from loom.ir.scope import Scope
from loom.ir.tile import ForLoop, Load, Op, Value, accesses, walk
from loom.model import primitives as prim
from loom.symbolic import Const, Expr, Sym, mul

OpTerms = dict[int, tuple[Term, ...]]
"""Compute terms by op identity (`compute.Compute.op_terms`)."""


def knob(kind: str, scope: Scope) -> Sym:
    """The pipeline knob `kind` (``b_load``/``b_store``) of `scope`'s pipe: 0 or 1."""
    return Sym(scope.knob(kind), 0, 1, 1, "knob")


def placement_knob(acc: Accumulator) -> Sym:
    """The placement knob of `acc`: an index into `loom.ir.buffers.PLACEMENTS`."""
    return Sym(acc.knob, 0, len(acc.placements) - 1, 1, "knob")


class HegCore:
    """One candidate's builder state and the helpers every term family uses
    (`heg.HegBuilder` is the whole builder)."""

    def __init__(
        self,
        buffered: BufferedProgram,
        candidate: Candidate,
        arch: Arch,
        fidelity: str,
        ops: OpTerms | None = None,
    ) -> None:
        self.b = buffered
        self.ops: OpTerms = {} if ops is None else ops
        """Each op's compute terms, by op identity (`op_terms`): shared by the
        candidates of one compile, since they read only the program, arch and fidelity."""
        self.program = buffered.program
        self.c = candidate
        self.arch = arch
        self.fidelity = fidelity
        self.access_index = {id(op): i for i, op in enumerate(accesses(self.program.body))}
        self.gathered = {v for vb in buffered.buffers if vb.role == "gather_in" for v in vb.values}
        self.cores = candidate.num_cores
        gather_group = [c for c in candidate.copies if c.mode == "gather"]
        self.group = math.prod(gather_group[0].area) if gather_group else 1
        self.traffic: list[Expr] = []
        """DRAM bytes of every transfer, times how often it runs, summed over cores."""
        self.passes: dict[str, tuple[list[prim.TransferSpec], list[tuple[Expr, Pipe]]]] = {}
        """Each pipe's own loads and its inner loops (trip, pipe), by pipe name (scope
        key): what `pass_reads` totals, only for the passes `pass_dram` charges."""
        self.pop_charged: set[str] = set()
        """Steady loops whose single-slot grid load's wait `pop_stall` charges: the
        compute around such a loop runs while the engine loads the next wave's blocks."""
        self.fills: list[Term] = []
        """Fills of the grid's steady loops, exposed once per program (`steady_fill`)."""
        self.lone_chain: Expr | None = None
        """The grid pipe's store chain with its store alone (`Stores.lone_store`); None
        where its store engine loads nothing of the grid body."""
        self.late_fills: set[str] = set()
        """Grid loops whose store engine also loads them: primed from the previous wave
        only when the stores go one wave late (`Candidate.stores_late`, `steady_fill`)."""
        self.accumulated: dict[str, tuple[Accumulator, str]] = {}
        """Value held by a matmul accumulator's state -> (accumulator, its store's dtype)."""
        for acc in buffered.accumulators:
            state = buffered.allocation_of_name(acc.state)
            out = buffered.allocation_of_name(acc.store).dtype if acc.store else state.dtype
            for vb in buffered.buffers:
                if vb.name in state.buffers:
                    self.accumulated.update(dict.fromkeys(vb.values, (acc, out)))

    # ----- helpers -----------------------------------------------------------------
    def copy_of(self, op: Op) -> CopyPlan:
        return self.c.copies[self.access_index[id(op)]]

    def layout(self, value: Value) -> TileLayout:
        return self.b.layouts[value.name]

    def tiles(self, value: Value) -> Expr:
        return self.layout(value).tiles

    def tile_bytes(self, dtype: str) -> int:
        return self.arch.tile.bytes(dtype if dtype in self.arch.tile.dtypes else "fp32")

    def buffered_value(self, value: Value) -> bool:
        return self.b.buffer_of(value.name) is not None

    def mean_trip(self, loop: ForLoop) -> Expr:
        """Trip count of `loop` on the busiest core. A loop bounded by a grid tile
        (`hl.tile(0, tile_m.end)`, causal attention) runs more iterations on later tiles;
        the lowering deals that axis's tiles back and forth over the waves, and the
        busiest core runs the trip count of its mean index (`loom.ir.deal`; the skipped
        key tiles cost nothing)."""
        middle: dict[str, Expr] = {}
        for a in self.program.grid:
            if a.index.name in loop.trip_count.free_names():
                f = self.c.spatial.get(a.tile.name, 1)
                waves = self.c.waves.get(a.tile.name, Const(1))
                balanced = a.index.name in self.triangular
                middle[a.index.name] = busiest_mean_index(f, waves, balanced)
        return loop.trip_count.subs(middle) if middle else loop.trip_count

    @functools.cached_property
    def triangular(self) -> frozenset[str]:
        """Grid indices with triangular work: the lowering deals them back and forth."""
        return triangular_indices(self.program)

    @functools.cached_property
    def waves(self) -> Expr:
        """Waves of the grid: the product of every grid axis's."""
        return mul(*self.c.waves.values()) if self.c.waves else Const(1)

    # ----- engines -------------------------------------------------------------------
    store_engine = "writer"
    """The data-movement engine that issues DRAM stores (NoC1)."""

    def load_engine(self, op: Load) -> str:
        vb = self.b.buffer_of(op.result.name)
        return self.copy_of(op).engine or (vb.producer if vb is not None else "reader")

    def inner_load_engines(self, ops: tuple[Op, ...]) -> set[str]:
        """Engines that issue the loads of the loops nested in `ops`."""
        return {
            self.load_engine(inner)
            for op in ops
            if isinstance(op, ForLoop)
            for inner in walk(op.body)
            if isinstance(inner, Load)
        }
