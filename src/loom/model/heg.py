"""Build the Hierarchical Execution Graph of a candidate (paper §2.6).

    root  = launch ; for(waves, pipe_grid)
    pipe_s = pipe(loads of scope s, body_s, stores of scope s)
    body_s = compute ; for(trip, pipe_loop) ; compute ; gathers ; merge   (in program order)

Every block (the grid body, every inner loop body) is a pipe whose load stage holds the
loads issued in that scope and whose store stage holds its stores. A split reduction's
merge runs on the owner only and folds the partials one by one, so the operations that
read gathered values repeat once per partial.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

from loom.arch import Arch
from loom.arch import noc as nocmap
from loom.ir.buffers import PLACEMENTS, Accumulator, BufferedProgram, TileLayout
from loom.ir.candidate import Candidate, CopyPlan
from loom.ir.geometry import TILE
from loom.ir.multicast import multicast_pipes
from loom.ir.problem import For, HegNode, Leaf, Pipe, Seq, Stage, Term, latency, sequential
from loom.ir.scope import Scope
from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Gather,
    If,
    Load,
    Matmul,
    Op,
    Reduce,
    Store,
    Value,
    Window,
    accesses,
    read_values,
    unread_results,
    walk,
)
from loom.model import primitives as prim
from loom.model.domains import grid_domain
from loom.symbolic import Cond, Const, Expr, Sym, add, ceildiv, maximum, minimum, mul, select


class Reads(NamedTuple):
    """One load engine's reads in one pass."""

    own: Expr
    """DRAM-wide time ω_e (`primitives.dram_wide`)."""
    sends: Expr
    """Multicast send time S_e."""
    streams: int
    """Read streams n_e: the cores reading at once."""

    def plus(self, other: Reads) -> Reads:
        return Reads(
            self.own + other.own, self.sends + other.sends, max(self.streams, other.streams)
        )


_NO_READS = Reads(Const(0), Const(0), 0)


@dataclass(frozen=True)
class EngineReads:
    """Per load engine, one pass's reads (`Reads`)."""

    engines: dict[str, Reads]

    @staticmethod
    def of(arch: Arch, loads: list[prim.TransferSpec]) -> EngineReads:
        out: dict[str, Reads] = {}
        for t in loads:
            read = Reads(prim.dram_wide(arch, t), prim.send_time(arch, t), t.concurrent)
            out[t.engine] = out.get(t.engine, _NO_READS).plus(read)
        return EngineReads(out)

    def times(self, trip: Expr) -> EngineReads:
        return EngineReads(
            {e: Reads(trip * r.own, trip * r.sends, r.streams) for e, r in self.engines.items()}
        )

    def plus(self, *others: EngineReads) -> EngineReads:
        out = dict(self.engines)
        for other in others:
            for e, r in other.engines.items():
                out[e] = out.get(e, _NO_READS).plus(r)
        return EngineReads(out)


OpTerms = dict[int, tuple[Term, ...]]
"""Compute terms by op identity (`HegBuilder.op_terms`)."""


def knob(kind: str, scope: Scope) -> Sym:
    """The pipeline knob `kind` (``b_load``/``b_store``) of `scope`'s pipe: 0 or 1."""
    return Sym(scope.knob(kind), 0, 1, 1, "knob")


def placement_knob(acc: Accumulator) -> Sym:
    """The placement knob of `acc`: an index into `loom.ir.buffers.PLACEMENTS`."""
    return Sym(acc.knob, 0, len(acc.placements) - 1, 1, "knob")


_NARROW: dict[tuple[object, ...], tuple[tuple[Cond, float], ...]] = {}
"""`HegBuilder.narrow_reads` by the pattern it depends on (many candidates share it)."""


class HegBuilder:
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
        (`hl.tile(0, tile_m.end)`, causal attention) runs more iterations on later tiles:
        the last core along that axis has the largest index in every wave, and over its
        waves it runs the trip count of its mean index, (f - 1) + f (W - 1) / 2 for f
        cores and W waves along the axis (the skipped key tiles cost nothing)."""
        middle: dict[str, Expr] = {}
        for a in self.program.grid:
            if a.index.name in loop.trip_count.free_names():
                f = self.c.spatial.get(a.tile.name, 1)
                waves = self.c.waves.get(a.tile.name, Const(1))
                middle[a.index.name] = Const(f - 1) + ceildiv(f * (waves - 1), 2)
        return loop.trip_count.subs(middle) if middle else loop.trip_count

    # ----- graph ---------------------------------------------------------------------
    @functools.cached_property
    def waves(self) -> Expr:
        """Waves of the grid: the product of every grid axis's."""
        return mul(*self.c.waves.values()) if self.c.waves else Const(1)

    def build(self) -> HegNode:
        """launch ; for(waves, pipe_grid) — the launch is a constant: it never changes
        the ranking, but the modeled time is the time of the whole program."""
        waves = self.waves
        launch = round(self.arch.us_to_cycles(self.arch.fixed.program_launch_us))
        start = Leaf("launch", (Term("fixed", "program launch", Const(launch)),))
        grid = For("waves", waves, self.block(self.program.body, Scope.grid(), False, waves))
        once = (Leaf("fill once", tuple(self.fills)),) if self.fills else ()
        return Seq("program", (start, grid, *once))

    def block(self, ops: tuple[Op, ...], scope: Scope, owners_only: bool, repeats: Expr) -> Pipe:
        """The pipe of one scope; `repeats` = how often it runs (for the DRAM traffic)."""
        loads: list[prim.TransferSpec] = []
        stores: list[prim.TransferSpec] = []
        items: list[HegNode] = []
        pending: list[Term] = []

        def flush() -> None:
            if pending:
                items.append(Leaf(f"compute@{scope}#{len(items)}", tuple(pending)))
                pending.clear()

        steady_loops: list[tuple[ForLoop, Pipe]] = []
        loops: list[tuple[Expr, Pipe]] = []
        hidden: Term | None = None
        for op in ops:
            if isinstance(op, Load):
                loads.append(self.load_spec(op))
            elif isinstance(op, Store):
                stores.append(self.store_spec(op, owners_only))
            elif isinstance(op, ForLoop):
                flush()
                trip = self.mean_trip(op)
                pipe = self.block(op.body, Scope.of((op,)), owners_only, repeats * trip)
                loops.append((trip, pipe))
                pending.extend(self.carry_terms(op))
                steady = self.steady_fill(op, ops, scope, pipe)
                if steady is not None:
                    items.append(For(f"for {op.tile.name}", trip, pipe, steady=True))
                    items.append(Leaf(f"fill@{scope}#{len(items)}", (steady,)))
                    if op.tile.name not in self.late_fills:  # primed by the late stores
                        steady_loops.append((op, pipe))
                else:
                    items.append(For(f"for {op.tile.name}", trip, pipe))
            elif isinstance(op, Gather):
                pending.extend(self.gather_terms(op))
            elif isinstance(op, If):
                flush()
                merge, merge_stores = self.merge(op)
                items.extend(merge)
                stores.extend(merge_stores)
            else:
                pending.extend(self.op_terms(op))
        flush()
        if len(steady_loops) == 1:
            (loop, pipe) = steady_loops[0]
            hidden = self.behind_loads(loop, ops, scope, pipe, items)
            if hidden is not None:
                items.append(Leaf(f"overlap@{scope}#{len(items)}", (hidden,)))
            busy = self.engine_occupancy(loop, ops, scope, pipe, items)
            if busy is not None:
                items.append(Leaf(f"occupancy@{scope}#{len(items)}", (busy,)))
        self.traffic.extend(
            t.tiles * t.tile_bytes * t.concurrent * repeats for t in (*loads, *stores)
        )
        load_terms, load_cycles = prim.dram_read_stage(self.arch, tuple(loads))
        names = [op.result.name for op in ops if isinstance(op, Load)]
        store_terms, store_cycles = prim.dram_write_stage(self.arch, tuple(stores))
        store = Stage(f"store@{scope}", store_terms, store_cycles)
        store, serial = self.place_store(items, store, stores, ops, scope, hidden, loops)
        self.passes[scope.key] = (loads, loops)
        body = Seq(f"body@{scope}", tuple(items))
        unheld = self.unheld(ops, dict(zip(names, loads, strict=True)), load_cycles, body)
        return Pipe(
            name=scope.key,
            load=Stage(
                f"load@{scope}",
                load_terms,
                load_cycles,
                prim.dram_read_floor(self.arch, tuple(loads)),
            ),
            body=body,
            store=store,
            b_load=knob("b_load", scope),
            b_store=knob("b_store", scope),
            scope=self.b.scope(scope),
            unheld=unheld,
            **self.pass_dram(stores, serial, scope, load_cycles, body, loops),
        )

    def pass_reads(self, name: str) -> EngineReads:
        """One pass's reads of pipe `name` per load engine: its own loads' and, trip
        times, its inner loops'."""
        loads, loops = self.passes[name]
        inner = (self.pass_reads(pipe.name).times(trip) for trip, pipe in loops)
        return EngineReads.of(self.arch, loads).plus(*inner)

    def pass_dram(
        self,
        stores: list[prim.TransferSpec],
        in_body: bool,
        scope: Scope,
        load_cycles: Expr,
        body: HegNode,
        loops: list[tuple[Expr, Pipe]],
    ) -> dict[str, Expr]:
        """The least one pass of a pipe takes for its DRAM traffic (`dram`), and what the
        previous pass's stores add to it (`stall`), for a pipe whose store stage is its
        own (its engine loads nothing of the pass; otherwise the store runs in series
        with the loads, `store_in_body`, and a pipe without stores is bound by its load
        stage, which counts the banks). However the stages overlap, the pass's loads and
        stores and its inner loops' traffic share the banks.

        When the pass's stores overlap the next pass (b_store = 1), the loading engine's
        reads stream while the stores hold the banks: a bank serves each stream fairly,
        so its n_e read streams against the stores' n_w wait W = min(ω_w, ω_e · n_w / n_e)
        more than their own DRAM time ω_e.

        * A pass bound by its multicast loads (the engine's load chain, its own stage
          `load_cycles` and its inner `loops`' stages trip times, at least the `body`)
          keeps every core in step (the multicast handshakes pace them), so every wave's
          stores leave together and each pass waits W; so does a pass whose inner loop
          has one slot per load (b_load = 0: it reads in series with its compute).
        * A pass bound by its compute, or whose reads are unicast, lets the cores drift
          apart: the stores spread over the pass, which lasts at least the engine's sends
          S_e plus ω_e + W (it cannot read while it sends). Where multicasts keep the
          cores together until then, the first wave's stores, every core's at once, still
          delay the next reads by W in full (once per program), except when the stores go
          one wave late: that wait is then the second wave's occupancy
          (`late_store_occupancy`, `late_store_ends`)."""
        if not stores or in_body:
            return {}  # the stages run in series on the engines (or there is no store)
        reads = self.pass_reads(scope.key)
        if not reads.engines:
            return {}
        written = add(*(prim.dram_wide(self.arch, t) for t in stores))
        banks = add(written, *(r.own for r in reads.engines.values()))
        writers = sum(t.concurrent for t in stores)
        own, sends, streams = max(reads.engines.values(), key=lambda r: r.streams)
        wait = minimum(written, ceildiv(own * writers, streams))
        overlapped = knob("b_store", scope).eq(1)
        # every loading engine reads, sends and waits for the banks in turn (one engine
        # but for a writer that loads in the body, `place_store`)
        chains = (
            r.sends + r.own + minimum(written, ceildiv(r.own * writers, r.streams))
            for r in reads.engines.values()
        )
        drift = select(overlapped, maximum(*chains), 0)
        if sends == Const(0):  # unicast reads: nothing paces the cores together
            return {"dram": maximum(banks, drift)}
        chain = load_cycles + add(*(trip * latency(pipe.load) for trip, pipe in loops))
        lockstep = chain.ge(latency(body))
        paced: Expr = select(lockstep, wait, 0)
        for _, pipe in loops:
            paced = maximum(paced, select(pipe.b_load.eq(0), wait, 0))
        if scope == Scope.grid() and not self.c.stores_late:
            first = select(lockstep, 0, minimum(self.waves - 1, 1) * wait)
            what = "the first wave's stores, all cores at once, delay the next wave's reads"
            self.fills.append(Term("fill", what, select(overlapped, first, 0)))
        return {"dram": maximum(banks, drift), "stall": select(overlapped, paced, 0)}

    def steady_fill(
        self, loop: ForLoop, ops: tuple[Op, ...], scope: Scope, pipe: Pipe
    ) -> Term | None:
        """A tile loop of the grid body whose first block the engines fetch during the
        previous wave: the fill (its first load and last body, `sequential - latency` of
        its pipe) is exposed once per program, not once per wave. That holds when the
        engines that load the loop's blocks issue nothing after the loop that waits for
        the compute (the writer's stores and gathers of the grid body). When they also
        load in the grid body itself (q), a double-buffered block lets them run ahead (the
        grid's b_load knob = 1); with one slot they wait for its last reader, and only
        what the rest of the wave does not hide is exposed per wave (`single_slot_fill`).
        Returns the per-wave term (and records the once-per-program one), or None: fill
        per wave."""
        if scope != Scope.grid():
            return None
        engines = {self.load_engine(op) for op in loop.body if isinstance(op, Load)}
        after = any(isinstance(op, (Store, Gather, If)) for op in ops)
        fill = sequential(pipe) - latency(pipe)
        what = f"fill of loop {loop.tile.name} (first load, last body)"
        if engines and after and self.store_engine in engines:
            if not self.c.stores_late:
                return None
            # stores one wave late: the engine fetches the next wave's first block
            # before it stores, so the fill shows once
            self.late_fills.add(loop.tile.name)
            self.fills.append(Term("fill", f"{what}, once", fill))
            return Term("fill", f"{what}, per wave", Const(0))
        if not engines:
            return None
        held = [op for op in ops if isinstance(op, Load) and self.load_engine(op) in engines]
        if held:
            # the first wave has no previous wave to hide its fill behind: it pays the
            # whole fill, the others what their single-slot load leaves exposed
            primed = knob("b_load", scope).eq(1)
            stall = self.pop_stall(loop, pipe, held)
            if stall is not None:
                self.pop_charged.add(loop.tile.name)
                once = fill
                if not self.peeled(loop):
                    # the last body runs while the engine still loads the iteration's
                    # later blocks (a load-bound iteration's slack); its rest, after the
                    # last block lands, is the stall charged per wave
                    slack = maximum(latency(pipe) - latency(pipe.body), 0)
                    once = select(primed, fill, fill - minimum(fill, slack))
                self.fills.append(Term("fill", f"{what}, once", once))
                return Term("fill", f"{what}, per wave", select(primed, 0, stall))
            single = self.single_slot_fill(loop, ops, held, fill)
            self.fills.append(Term("fill", f"{what}, once", select(primed, fill, fill - single)))
            return Term("fill", f"{what}, per wave", select(primed, 0, single))
        self.fills.append(Term("fill", f"{what}, once", fill))
        return Term("fill", f"{what}, per wave", Const(0))

    @functools.cached_property
    def read(self) -> frozenset[str]:
        """Every value the program reads (`read_values`), walked once per candidate."""
        return read_values(self.program.body)

    def peeled(self, loop: ForLoop) -> bool:
        """Whether the lowering peels `loop`'s last iteration (`unread_results`): only
        then can a block the loop reads be popped before the loop ends."""
        return any(self.buffered_value(c.init) for c in unread_results(loop, self.read))

    def pop_stall(self, loop: ForLoop, pipe: Pipe, held: list[Load]) -> Expr | None:
        """What a single-slot grid load (q, b_load_grid = 0) costs per wave when the
        engine that loads it also streams the loop's blocks (K, then V). None when the
        loop body is not straight-line.

        The compute pops q when its wait ends (`loom.lower.waits`). A loop whose last
        iteration is not peeled (`peeled`) is one step of the grid body, so q's wait
        encloses the whole loop: the engine, having loaded the last iteration's blocks,
        waits for the end of the loop before it loads the next q. Of that wait, the part
        after its last block lands shows: the compute from that block's first reader to
        the end of the iteration (and its carries), r, less the slack a compute-bound
        iteration already leaves the engine: max(0, r + l - T(pipe)). In a peeled loop
        the wait ends at q's last reader in the last iteration (the scores); when that
        reader reads a block the engine loads before others of the iteration, the engine
        waits for the slot only as long as the reader's compute (from the block's first
        reader to the pop) outlasts those later loads: max(0, r - l_after)."""
        names = {op.result.name for op in held}
        body = [op for op in loop.body if not isinstance(op, (Load, Store))]
        loads = [op for op in loop.body if isinstance(op, Load)]
        if any(isinstance(op, (ForLoop, Gather, If)) for op in body):
            return None
        engines = {self.load_engine(op) for op in held}

        def first_reader(block: str) -> int | None:
            return next(
                (i for i, op in enumerate(body) if block in {v.name for v in op.operands()}),
                None,
            )

        if not self.peeled(loop):
            mine = [op.result.name for op in loads if self.load_engine(op) in engines]
            first = first_reader(mine[-1]) if mine else None
            if first is None:
                return None
            rest = [t.cycles for op in body[first:] for t in self.op_terms(op)]
            carries = [t.cycles for t in self.carry_terms(loop, per_iteration=True)]
            return maximum(add(*rest, *carries) + latency(pipe.load) - latency(pipe), 0)
        if len(loads) < 2:
            return None
        readers = [i for i, op in enumerate(body) if {v.name for v in op.operands()} & names]
        if not readers:
            return None
        last = readers[-1]
        block = {v.name for v in body[last].operands()} & {op.result.name for op in loads}
        order = [op.result.name for op in loads]
        if len(block) != 1:
            return None
        (b,) = block
        at = order.index(b)
        if at == len(order) - 1 or self.load_engine(loads[at]) not in engines:
            return None
        first = first_reader(b)
        assert first is not None
        reader = [t.cycles for op in body[first : last + 1] for t in self.op_terms(op)]
        terms = [t for t in pipe.load.terms if t.kind in ("dram_read", "multicast")]
        later = [
            t.cycles
            for op, t in zip(loads[at + 1 :], terms[at + 1 :], strict=False)
            if self.load_engine(op) == self.load_engine(loads[at])
        ]
        if not later:
            return None
        return maximum(add(*reader) - add(*later), 0)

    def behind_loads(
        self, loop: ForLoop, ops: tuple[Op, ...], scope: Scope, pipe: Pipe, items: list[HegNode]
    ) -> Term | None:
        """The grid body's compute outside a steady loop (state fills before it, gathers
        and the merge after it) runs while the loop's engines, which issue nothing of it,
        fetch the next wave's first blocks: the compute waits T(pipe) - m per iteration
        for its loads, and the engines run one block ahead, so up to that slack of it
        hides. With a single-slot grid load of the same engines (b_load_grid = 0) whose
        wait `pop_stall` charges, the same holds once the load is popped; otherwise its
        fill per wave already counts the tail after the load's last reader
        (`single_slot_fill`), and nothing more is taken. Only compute hides: leaves and
        loops that load nothing (another loop issues loads of its own), so the term's
        floor, -c_around, holds for any copy mode."""
        around = [
            latency(node)
            for node in items
            if (isinstance(node, Leaf) and not node.name.startswith("fill@"))
            or (isinstance(node, For) and not node.steady and isinstance(node.body, Leaf))
        ]
        if not around:
            return None
        slack = maximum(latency(pipe) - latency(pipe.body), 0)
        hidden = minimum(add(*around), slack)
        engines = {self.load_engine(op) for op in loop.body if isinstance(op, Load)}
        held = [op for op in ops if isinstance(op, Load) and self.load_engine(op) in engines]
        if held and loop.tile.name not in self.pop_charged:
            hidden = select(knob("b_load", scope).eq(1), hidden, 0)
        what = "compute outside the loop, hidden behind the loop's loads of the next wave"
        # the slack depends on the loop's load stage (copy modes); what hides never
        # exceeds the compute around the loop, which does not
        return Term("overlap", what, Const(0) - hidden, floor=Const(0) - add(*around))

    def place_store(
        self,
        items: list[HegNode],
        store: Stage,
        stores: list[prim.TransferSpec],
        ops: tuple[Op, ...],
        scope: Scope,
        behind: Term | None,
        loops: list[tuple[Expr, Pipe]],
    ) -> tuple[Stage, bool]:
        """The pipe's store stage, and whether the store runs in series with the body's
        loads on one engine (`store_in_body`; no bank term then, `pass_dram`). A writer
        that loads in the body and stores one wave late (`Candidate.stores_late`) keeps
        the stage, overlapped, and its own work bounds the wave (`late_store_occupancy`)."""
        if not stores or self.store_engine not in self.inner_load_engines(ops):
            return store, False
        if self.c.stores_late and scope == Scope.grid():
            items.append(self.late_store_occupancy(loops, store.cycles, items))
            return store, False
        return self.store_in_body(items, store, scope, behind), True

    def store_in_body(
        self, items: list[HegNode], store: Stage, scope: Scope, behind: Term | None
    ) -> Stage:
        """The engine that stores also loads inside the body (a nested loop's operand): its
        store runs between two bodies' loads, so no buffer can overlap it; it goes into
        the body (`items`), with what the next wave's opening compute hides of it, and the
        pipe's own store stage is empty."""
        covered = self.behind_store(items, store, behind) if scope == Scope.grid() else None
        items.append(store)
        if covered is not None:
            items.append(Leaf(f"overlap@{scope}#{len(items)}", (covered,)))
        return Stage(f"store@{scope}", (), Const(0))

    def late_store_occupancy(
        self, loops: list[tuple[Expr, Pipe]], store: Expr, items: list[HegNode]
    ) -> Leaf:
        """With the stores one wave late (`loom.lower.loops.with_waves_stores_late`), the
        store engine loads the next wave's first blocks, as many as its buffer holds
        (`depth`), then stores the previous wave's result, then loads the rest. The
        compute runs meanwhile until it needs the block loaded after the store: the
        next wave's block `depth` (`depth` steps of the loop) or, with a loop no deeper
        than its buffer, the first block of the wave after (the whole body). The store
        (its stage: with the other cores' writes on the links and banks, the multicast
        handshakes keeping the cores' writers together) and that load show beyond it:
        per wave + max(0, s + l - that time, occupancy - body), occupancy = the engine's
        loads of the wave (trip x its part of the loop's load stage, shared with the
        other engine's reads) + s."""
        body = add(*(latency(node) for node in items))
        own: list[Expr] = []
        waits: list[Expr] = []
        cut: tuple[Expr, Pipe] | None = None
        for trip, pipe in loops:
            transfers = tuple(self.passes[pipe.name][0])
            if not any(t.engine == self.store_engine for t in transfers):
                continue
            load = prim.engine_read_stage(self.arch, transfers, self.store_engine)
            own.append(trip * load)
            if cut is None:  # the loop the lowering cuts after its first `depth` loads
                cut = (trip, pipe)
                step = latency(pipe)
                one = select(trip.ge(2), step, body)
                two = select(trip.ge(3), 2 * step, body)
                waits.append(store + load - select(pipe.b_load.eq(1), two, one))
        what = "the store engine's loads and the previous wave's stores (busy per wave)"
        extra = maximum(add(*own, store) - body, *waits, 0)
        self.fills.append(self.late_store_ends(extra, store, body, cut))
        term = Term("occupancy", what, extra, Const(0))
        return Leaf(f"occupancy@{Scope.grid()}#{len(items)}", (term,))

    def late_store_ends(
        self, extra: Expr, store: Expr, body: Expr, cut: tuple[Expr, Pipe] | None
    ) -> Term:
        """The waves at the ends of a program whose stores go one wave late are not
        occupied as the others (`late_store_occupancy`): the first has no stores before
        it, and when the loop is no deeper than its buffer (one K step per wave) the last
        wave's blocks were all fetched during the wave before, so its store engine only
        stores the previous result beside the compute (+ max(0, s - body)). Once per
        program. Its own kind, not a fill: the path bounds (`loom.solve.bounds`) charge
        the per-wave term, so they must charge this one too to stay below T. Its floor
        is 0 as the per-wave term's: together they never charge less than 0 (the class
        bound's floored path)."""
        back = extra
        if cut is not None:
            trip, pipe = cut
            depth = select(pipe.b_load.eq(1), Const(2), Const(1))
            last = select(trip.le(depth), extra - maximum(store - body, 0), 0)
            back = extra + minimum(self.waves - 1, 1) * last
        what = "the first (and, one K step per wave, the last) wave's occupancy, not charged"
        return Term("occupancy", what, Const(0) - back, Const(0))

    def behind_store(self, items: list[HegNode], store: Stage, behind: Term | None) -> Term | None:
        """The compute that opens a wave before its first loop (GEMM's accumulator fill)
        needs nothing the store engine brings, so it runs while that engine stores the
        previous wave's result, which the body otherwise charges in series: per wave up to
        the store's time of it hides, less what `behind_loads` already hid of it. The
        first wave has no store before it: that part comes back once per program."""
        lead: list[Expr] = []
        for node in items:
            if isinstance(node, For):
                break
            if isinstance(node, Leaf):
                lead.append(latency(node))
        if not lead:
            return None
        free = add(*lead) if behind is None else maximum(add(*lead) + behind.cycles, 0)
        covered = minimum(latency(store), free)
        self.fills.append(
            Term("fill", "the first wave's opening compute (no store before it)", covered)
        )
        what = "compute opening the wave, hidden behind the previous wave's store"
        return Term("overlap", what, Const(0) - covered, floor=Const(0) - add(*lead))

    def engine_occupancy(
        self, loop: ForLoop, ops: tuple[Op, ...], scope: Scope, pipe: Pipe, items: list[HegNode]
    ) -> Term | None:
        """A grid load issued by an engine that also streams a steady loop's blocks (flash
        decode's q on the reader that loads K and V) is not hidden behind the grid body
        by its buffer: the engine issues it between two waves' streams, so per wave the
        engine is busy for the grid loads' stage plus trip x the loop's load stage. With
        b_load = 1 the grid pipe overlaps its load stage with the body; the body then
        lasts at least that occupancy: + max(0, occupancy - body). With b_load = 0 the
        load stage is already serial with the body. Returns None when no grid load shares
        an engine with the loop."""
        engines = {self.load_engine(op) for op in loop.body if isinstance(op, Load)}
        held = [op for op in ops if isinstance(op, Load) and self.load_engine(op) in engines]
        if not held:
            return None
        _, grid_load = prim.dram_read_stage(self.arch, tuple(self.load_spec(op) for op in held))
        occupancy = grid_load + self.mean_trip(loop) * latency(pipe.load)
        body = add(*(latency(node) for node in items))
        extra = select(knob("b_load", scope).eq(1), maximum(occupancy - body, 0), 0)
        what = "the loop's load engine also issues the grid loads (busy per wave)"
        return Term("occupancy", what, extra, floor=Const(0))

    def single_slot_fill(
        self, loop: ForLoop, ops: tuple[Op, ...], held: list[Load], fill: Expr
    ) -> Expr:
        """The per-wave fill of a grid loop whose engine also loads single-slot blocks in
        the grid body (flash decode's and attention's q, b_load_grid = 0).

        In a peeled loop (`peeled`; the others reach here only with a body that is not
        straight-line, which keeps the fill per wave) the compute pops such a block
        after its last reader, the last iteration's scores, so the engine loads the next
        wave's block and the loop's first block while the rest of the wave runs: the ops
        of the loop body after that reader and the grid body's compute after the loop
        (up to a gather, merge or nested loop), `tail`. Of the next wave's load (its
        stage charged in the grid pipe, `l`) and the fill, only what exceeds the tail is
        exposed: l + fill' = max(0, l + fill - tail), i.e. fill' = max(fill - tail, -l).
        A block read after the loop, or a loop body that is not straight-line, leaves the
        fill per wave."""
        names = {op.result.name for op in held}

        def reads(op: Op) -> bool:
            return bool({v.name for v in op.operands()} & names)

        at = next(i for i, op in enumerate(ops) if op is loop)
        after: list[Op] = []
        for op in ops[at + 1 :]:
            if isinstance(op, (ForLoop, Gather, If)):
                break
            if not isinstance(op, (Load, Store)):
                after.append(op)
        body = [op for op in loop.body if not isinstance(op, (Load, Store))]
        if (
            any(reads(op) for op in ops[at + 1 :])
            or any(isinstance(op, (ForLoop, Gather, If)) for op in body)
            or not any(reads(op) for op in body)
        ):
            return fill
        last = max(i for i, op in enumerate(body) if reads(op))
        tail = [t.cycles for op in (*body[last + 1 :], *after) for t in self.op_terms(op)]
        if not tail:
            return fill
        _, load = prim.dram_read_stage(self.arch, tuple(self.load_spec(op) for op in held))
        return maximum(fill - add(*tail), Const(0) - load)

    def unheld(
        self, ops: tuple[Op, ...], loads: dict[str, prim.TransferSpec], ell: Expr, pipe_body: Seq
    ) -> Expr:
        """Load time hidden behind the compute of a straight-line body whose loads are
        single-slot (b_load = 0; flash attention's and decode's K and V); `loads` gives
        each load's transfer (its refetch time is `primitives.refill_cycles`, built only
        when needed), `ell` the load stage's time; `pipe_body` is the body's node.

        Every load has a slot of its own (`loom.dataflow.concretize`), freed after its
        block's last reader: the engine that loads K fetches the next K into K's slot while
        the compute still works from V, and the next V is fetched while the compute works
        from K, on whichever engine loads V. So an iteration lasts the longest of the
        stage (ℓ), the compute (m) and each slot's cycle: its block's refetch, then its
        hold from first to last reader (r_j + h_j). The hidden part is what makes the
        pipe's serial form ``ℓ + m - hidden`` that period. A body with one load, or with
        loops, gathers or merges: 0. So is one whose blocks are all held from its first op
        to its last (GEMM's A and B): they are freed and refetched together, which is the
        load stage itself, and the term is not built (it is most of a GEMM's model)."""
        if any(isinstance(op, (ForLoop, Gather, If)) for op in ops):
            return Const(0)
        loaded = [op.result.name for op in ops if isinstance(op, Load)]
        if len(loaded) < 2 or not set(loaded) <= set(loads):
            return Const(0)
        body = [op for op in ops if not isinstance(op, (Load, Store))]
        readers = {
            v: [i for i, op in enumerate(body) if v in {x.name for x in op.operands()}]
            for v in sorted(loaded)
        }
        spans = {v: (idx[0], idx[-1]) for v, idx in readers.items() if idx}
        if all(span == (0, len(body) - 1) for span in spans.values()):
            return Const(0)
        stage = tuple(loads.values())
        cycles = []
        for v, (first, last) in spans.items():
            hold = (t.cycles for i in range(first, last + 1) for t in self.op_terms(body[i]))
            cycles.append(add(prim.refill_cycles(self.arch, loads[v], stage), *hold))
        m = latency(pipe_body)
        return ell + m - maximum(ell, m, *cycles)

    # ----- transfers -----------------------------------------------------------------
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

    def load_spec(self, op: Load) -> prim.TransferSpec:
        plan = self.copy_of(op)
        vb = self.b.buffer_of(op.result.name)
        assert vb is not None
        tiles = vb.layout.tiles
        group = plan.area[0] * plan.area[1]
        area = f" {plan.area}" if group > 1 else ""
        what = f"load {op.tensor} (line {op.line}, {plan.mode}{area})"
        engine = plan.engine or vb.producer
        return prim.TransferSpec(
            what,
            self.tile_bytes(vb.dtype),
            tiles,
            max(self.cores // group, 1),
            plan.mode == "multicast",
            engine,
            self.load_links(plan, engine),
            self.bank_spread(op.tensor, op.window, vb.layout),
            nocmap.load_read_link_load(
                self.arch,
                engine,
                (self.c.mapping.cores_y, self.c.mapping.cores_x),
                plan.mode,
                plan.area,
            ),
            self.sends(plan.area, engine) if plan.mode == "multicast" else (),
            self.narrow_reads(op, plan, engine),
        )

    @staticmethod
    def sends(area: tuple[int, int], engine: str) -> tuple[prim.SendSpec, ...]:
        """The sends of one multicast group's sender, as the lowering realizes them
        (`multicast_pipes`, the sender on the corner its engine's NoC enters from):
        receivers and grid steps to the farthest of each pipe."""
        row, rest = multicast_pipes(area, area, engine == "writer")
        out = []
        for pipe in (*row, *rest):
            dsts = [c for c in pipe.receivers if c != pipe.src]
            span = max(abs(y - pipe.src[0]) + abs(x - pipe.src[1]) for y, x in dsts)
            out.append(prim.SendSpec(len(dsts), span))
        return tuple(out)

    def bank_spread(
        self, tensor: str, window: tuple[Window, ...], layout: TileLayout
    ) -> prim.BankSpread:
        """Where the concurrent cores' blocks of one access fall on the DRAM banks: the
        grid axes in the column (row) offsets spread the cores over that many distinct
        column (row) blocks; loop indices are the same on every core at once. A grid axis
        in a batch dimension moves a block by whole batch entries, each `unit` tile rows;
        when `unit` is a multiple of nb / period, every entry starts on the same banks
        (flash decode's heads of S / 32 rows), so that axis spreads nothing."""
        shape = self.program.arg(tensor).shape
        nb, period = len(self.arch.dram.banks), self.bank_period(tensor)

        def spread(offsets: tuple[Expr, ...]) -> int:
            names = set().union(*(o.free_names() for o in offsets))
            return math.prod(
                self.c.spatial.get(a.tile.name, 1)
                for a in self.program.grid
                if a.index.name in names
            )

        def unit(dim: int) -> int:
            """Tile rows of one entry of batch dimension `dim`."""
            return math.prod(shape[dim + 1 : -2]) * -(-shape[-2] // TILE)

        rows = window[:-1]
        moving = tuple(
            w.offset for i, w in enumerate(rows) if i == len(rows) - 1 or unit(i) % (nb // period)
        )
        return prim.BankSpread(
            rows=layout.tile_rows,
            period=period,
            col_blocks=spread((window[-1].offset,)),
            row_blocks=spread(moving),
        )

    def bank_period(self, tensor: str) -> int:
        """gcd(C, nb) for a tensor C tiles wide: its rows start on the multiples of it
        (`prim.BankSpread`)."""
        cols = -(-self.program.arg(tensor).shape[-1] // TILE)
        return math.gcd(cols, len(self.arch.dram.banks))

    def narrow_reads(self, op: Load, plan: CopyPlan, engine: str) -> tuple[tuple[Cond, float], ...]:
        """The busiest read link of a block narrower than the banks' period whose
        columns one grid axis alone sets (GEMM's B: its n block, the same at every K
        step). Tile (r, c) is in bank (r·C + c) mod nb, so over its rows the block of
        reader i, W columns from i·W, touches only the banks ≡ i·W + j (mod period),
        j < W (`prim.BankSpread`): its bytes crowd those banks' routes
        (`nocmap.bank_read_peak`) instead of spreading over all of them. One share per
        width W < period in the axis's domain (`domains.grid_domain`), for the first
        wave's blocks (a later wave shifts every reader's banks alike). Wider blocks,
        columns that move with a loop, a period of 1: none."""
        nb, period = len(self.arch.dram.banks), self.bank_period(op.tensor)
        col = op.window[-1]
        grid = next(
            (
                a
                for a in self.program.grid
                if col.offset.key == (a.tile * a.index).key and col.size.key == a.tile.key
            ),
            None,
        )
        if period == 1 or grid is None:
            return ()
        axis, m = grid.tile, self.c.mapping
        split = axis.name in self.c.gather_axes
        pattern = (engine, plan.mode, plan.area, m.levels, split)
        key = (self.arch.name, *pattern, axis.key, grid.extent, period)
        if key not in _NARROW:
            readers = nocmap.load_readers(engine, (m.cores_y, m.cores_x), plan.mode, plan.area)
            index = [(core, m.spatial_index(axis.name, *core)) for core in readers]
            noc = nocmap.NOC_OF_ENGINE.get(engine, 0)
            out = []
            cores = self.c.spatial[axis.name]
            for size in grid_domain(axis, grid.extent, cores, split):
                w = size // TILE
                if w >= period:
                    continue
                banks = [
                    tuple(b for b in range(nb) if (b - first) % period < w)
                    for first in range(period)
                ]
                reads = tuple((core, banks[i * w % period]) for core, i in index)
                out.append((axis.eq(size), nocmap.bank_read_peak(self.arch, noc, reads)))
            _NARROW[key] = tuple(out)
        return _NARROW[key]

    def load_links(self, plan: CopyPlan, engine: str) -> nocmap.LinkLoad:
        """NoC link loads of one load, on the issuing engine's NoC, as lowered."""
        m = self.c.mapping
        return nocmap.load_link_load(
            self.arch, engine, (m.cores_y, m.cores_x), plan.mode, plan.area
        )

    def store_spec(self, op: Store, owners_only: bool) -> prim.TransferSpec:
        vb = self.b.buffer_of(op.value.name)
        assert vb is not None
        tiles = vb.layout.tiles
        writers = self.cores // self.group if owners_only else self.cores
        m = self.c.mapping
        links = (
            ()
            if owners_only
            else nocmap.dram_link_load(
                self.arch, 1, nocmap.all_cores((m.cores_y, m.cores_x)), write=True
            )
        )
        return prim.TransferSpec(
            f"store {op.tensor} (line {op.line})",
            self.tile_bytes(vb.dtype),
            tiles,
            max(writers, 1),
            links=links,
            banks=self.bank_spread(op.tensor, op.window, vb.layout),
        )

    def gather_terms(self, op: Gather) -> list[Term]:
        tiles = self.tiles(op.operand)
        what = f"gather {op.operand.name} across {op.across} (line {op.line})"
        return [
            prim.pack_term(
                self.arch,
                f"copy {op.operand.name} to its send buffer",
                tiles,
                self.tile_bytes(op.operand.dtype),
            ),
            prim.gather_term(self.arch, what, tiles, self.tile_bytes(op.operand.dtype), self.group),
        ]

    def carry_terms(self, loop: ForLoop, per_iteration: bool = False) -> list[Term]:
        """A next value kept in its own buffer is copied into the state every iteration
        (the whole loop's copies, or one iteration's)."""
        terms = []
        for c in loop.carried:
            state = self.b.buffer_of(c.arg.name)
            if state is not None and c.next.name not in state.values:
                tiles = self.tiles(c.next)
                trip = Const(1) if per_iteration else self.mean_trip(loop)
                size = self.tile_bytes(c.next.dtype)
                per = self.arch.compute.pack_cycles(size) + self.arch.compute.unpack_cycles(size)
                terms.append(
                    Term(
                        "pack",
                        f"carry {c.next.name} into {c.arg.name} (per iteration)",
                        trip * tiles * per,
                    )
                )
        return terms

    # ----- compute -------------------------------------------------------------------
    def op_terms(self, op: Op) -> list[Term]:
        """The compute terms of one op (its operands' layouts, the arch and the fidelity:
        not the candidate), built once per compile (`ops`)."""
        terms = self.ops.get(id(op))
        if terms is None:
            terms = self.ops[id(op)] = tuple(self._op_terms(op))
        return list(terms)

    def _op_terms(self, op: Op) -> list[Term]:
        arch, terms = self.arch, []
        where = f"line {getattr(op, 'line', 0)}"
        match op:
            case Matmul(result=r, lhs=a, rhs=b):
                la, lb = self.layout(a), self.layout(b)
                n = ceildiv(lb.rows, TILE) if op.rhs_transposed else lb.tile_cols
                terms.append(
                    prim.matmul_term(
                        arch,
                        self.fidelity,
                        f"matmul {r.name} ({where})",
                        la.tile_rows,
                        n,
                        la.tile_cols,
                    )
                )
            case Elementwise(result=r, op=kind):
                terms.append(
                    prim.eltwise_term(arch, kind, f"{kind} {r.name} ({where})", self.tiles(r))
                )
            case Reduce(result=r, op=kind, operand=x):
                terms.append(
                    prim.reduce_term(arch, kind, f"reduce-{kind} {r.name} ({where})", self.tiles(x))
                )
            case Full(result=r):
                size = self.tile_bytes(r.dtype)
                terms.append(prim.pack_term(arch, f"fill {r.name} ({where})", self.tiles(r), size))
                return terms
            case Convert(result=r, operand=x) if x.name in self.accumulated:
                return [self.final_copy(r, x)]
            case Convert() | ExpandDims():
                return terms
            case _:
                return terms
        return [self.overlapped(op, terms)]

    def overlapped(self, op: Op, math: list[Term]) -> Term:
        """One compute operation on the Tensix's three concurrent threads (unpack, math,
        pack): its fixed overhead plus the busiest of the three.

        Unpack reads the operands that live in L1 at the unpackers' bandwidth; a matmul
        feeds every tile-matmul both operand tiles, and its accumulator is added in the
        packer (L1 accumulation), not unpacked. Pack writes the results kept in L1.

        A matmul also fills and drains the pipeline once per operation: the first
        tile-matmul's operands are unpacked before math starts and the last result tile is
        packed after it ends (one tile-matmul's unpack plus one tile's pack), a fixed cost
        per K step that makes many thin K blocks slower than a few deep ones."""
        arch = self.arch
        unpack: list[Expr] = []
        edges: Expr = Const(0)
        if isinstance(op, Matmul):
            la, lb = self.layout(op.lhs), self.layout(op.rhs)
            n = ceildiv(lb.rows, TILE) if op.rhs_transposed else lb.tile_cols
            per = arch.compute.unpack_cycles(self.tile_bytes(op.lhs.dtype))
            per += arch.compute.unpack_cycles(self.tile_bytes(op.rhs.dtype))
            unpack.append(la.tile_rows * n * la.tile_cols * per)
            drain = [self.pack_cycles(v) for v in op.results() if self.buffered_value(v)]
            edges = add(Const(per), *drain)
        else:
            for value in op.operands():
                if self.buffered_value(value):
                    size = self.tile_bytes(value.dtype)
                    unpack.append(self.tiles(value) * arch.compute.unpack_cycles(size))
        pack: list[Expr] = [
            self.tiles(v) * self.pack_cycles(v) for v in op.results() if self.buffered_value(v)
        ]
        parts = [add(*(t.cycles for t in math))]
        parts += [add(*unpack)] if unpack else []
        parts += [add(*pack)] if pack else []
        overhead = arch.compute.op_overhead_cycles if pack else 0
        first = math[0]
        what = first.what + (" (unpack, math and pack overlapped)" if len(parts) > 1 else "")
        return Term(first.kind, what, maximum(*parts) + overhead + edges)

    def final_copy(self, out: Value, state: Value) -> Term:
        """The copy of a matmul accumulator's state into its store block after the
        reduction loop (`loom.lower.accumulate`): unpack the state's tiles, pack them in
        the output's format, plus the operation's overhead and its last tile's pack. The
        ``output`` placement accumulates in the store block itself and has no copy."""
        compute = self.arch.compute
        acc, _ = self.accumulated[state.name]
        tiles = self.tiles(out)
        unpack = compute.unpack_cycles(self.tile_bytes(state.dtype))
        pack = compute.pack_cycles(self.tile_bytes(out.dtype))
        cycles = tiles * max(unpack, pack) + compute.op_overhead_cycles + pack
        if len(acc.placements) > PLACEMENTS.index("output"):
            # [x != output] = 1 - max(x - 1, 0) for x in (separate, l1, output)
            cycles = cycles * (1 - maximum(placement_knob(acc) - 1, 0))
        return Term("pack", f"copy {state.name} into {out.name} (after the loop)", cycles)

    def pack_cycles(self, value: Value) -> Expr:
        """Cycles to pack one tile of `value`. A matmul accumulator's step packs into
        its placement (`loom.ir.buffers.PLACEMENTS`): the other block of its state in its
        own format (separate), or its one block in its own format (l1) or in the output's
        (output) by adding into L1, at the packers' accumulate rate."""
        compute = self.arch.compute
        plain = compute.pack_cycles(self.tile_bytes(value.dtype))
        if value.name not in self.accumulated:
            return Const(plain)
        acc, out = self.accumulated[value.name]
        x = placement_knob(acc)
        cycles = [
            plain,
            compute.pack_accumulate_cycles(self.tile_bytes(value.dtype)),
            compute.pack_accumulate_cycles(self.tile_bytes(out)),
        ][: len(acc.placements)]
        # piecewise in x without a conditional (the bounds evaluate it on whole grids):
        # [x >= 1] = min(x, 1), [x >= 2] = max(x - 1, 0)
        chosen: Expr = Const(cycles[0]) + minimum(x, 1) * (cycles[1] - cycles[0])
        if len(cycles) > 2:
            chosen = chosen + maximum(x - 1, 0) * (cycles[2] - cycles[1])
        return chosen

    def merge(self, guard: If) -> tuple[list[HegNode], list[prim.TransferSpec]]:
        """Owner-only merge: ops on gathered values fold once per partial."""
        per_partial: list[Term] = []
        once: list[Term] = []
        stores = []
        for op in guard.body:
            if isinstance(op, Store):
                stores.append(self.store_spec(op, owners_only=True))
                continue
            folded = any(v.name in self.gathered for v in op.operands())
            (per_partial if folded else once).extend(self.op_terms(op))
            folds = isinstance(op, Reduce) and op.axis == 0  # its result is one partial-free value
            if folded and not folds:
                self.gathered.update(r.name for r in op.results())
        nodes: list[HegNode] = []
        if per_partial:
            nodes.append(
                For("merge partials", Const(self.group), Leaf("merge@fold", tuple(per_partial)))
            )
        if once:
            nodes.append(Leaf("merge@final", tuple(once)))
        return nodes, stores
