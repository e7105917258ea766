"""Where a pipe's stores run: in its own stage, overlapped with the next pass; in the
body, when the engine that stores also loads inside it (and what the next wave's
opening compute hides of it); or one wave late, with that engine's occupancy; and the
chain of an engine that loads and stores in one scope."""

from __future__ import annotations

from dataclasses import replace

from loom.ir.problem import For, HegNode, Leaf, Pipe, Stage, Term, latency
from loom.ir.scope import Scope
from loom.ir.tile import ForLoop, Gather, If, Load, Op, Store, walk
from loom.model import primitives as prim
from loom.model.compute import Compute
from loom.model.core import knob
from loom.model.statements import Statement, lowered_statements
from loom.symbolic import Const, Expr, add, maximum, minimum, select


class Stores(Compute):
    """The store stage's placement and its terms."""

    def store_chain(
        self,
        ops: tuple[Op, ...],
        loads: list[prim.TransferSpec],
        body: HegNode,
        store: Stage,
        stores: list[prim.TransferSpec],
        scope: Scope,
    ) -> Expr:
        """The least one pass takes when the engine that stores also loads in this scope
        (a third operand dealt to the writer: RMSNorm's residual, SwiGLU's up): in program
        order it loads its blocks of pass i, waits for the body to produce the result,
        stores it, and only then loads its blocks of pass i + 1, so neither buffer lets
        its loads overlap its stores. Per pass: its loads (`engine_read_stage`, sharing
        the banks and links with the other engine's) + the compute from the first
        statement that reads one of its blocks (`lowered_statements`) to the end of the body + the
        store stage (0 when the store already runs in the body). The compute before that
        statement runs while the engine stores the previous pass. A body with loops,
        gathers or merges: all of it. 0 (no floor) when nothing is stored.

        When the store engine loads nothing here and the other does (a reader-only
        looped row's store pass), with one store block (b_store = 0) the compute of pass
        i + 1 reserves it only once pass i's write has left it: each pass is the body,
        then the write beside the other engine's reads of the next pass, which start
        when the body pops their blocks, i.e. with it; the pipe's max(ℓ, m + s) charged
        the write alone. A body with loops, gathers or merges: 0.

        The other engine's reads of the next pass start when the body pops its blocks,
        after the last statement that reads one of them: they run alone through the
        compute after it, and the store shares the banks with the rest (`_shared_store`);
        behind a multicast of that engine, with two slots, from the compute's start
        (`_behind_sends`)."""
        pairs = list(zip(self.own_loads(ops), loads, strict=True))
        mine = [op for op, t in pairs if t.engine == self.store_engine]
        theirs = [(op, t) for op, t in pairs if t.engine != self.store_engine]
        if not any(isinstance(op, Store) for op in ops):
            return Const(0)
        if not mine:
            if not loads or any(isinstance(op, (ForLoop, Gather, If)) for op in ops):
                return Const(0)
            return select(
                knob("b_store", scope).eq(0), self._one_store_block(ops, loads, stores), 0
            )
        load = prim.engine_read_stage(self.arch, tuple(loads), self.store_engine)
        compute = latency(body)
        alone: Expr = Const(0)
        if not any(isinstance(op, (ForLoop, Gather, If)) for op in ops):
            names = {op.result.name for op in mine}
            statements = lowered_statements(
                self, [op for op in ops if not isinstance(op, (Load, Store))]
            )
            first = next(
                (i for i, st in enumerate(statements) if names & st.reads), len(statements)
            )
            before = [c for st in statements[:first] for c in st.cycles]
            if before:
                compute = maximum(compute - add(*before), 0)
            read = {op.result.name for op, _ in theirs}
            readers = [i for i, st in enumerate(statements) if read & st.reads]
            after = statements[readers[-1] + 1 :] if readers else []
            alone = add(*(c for st in after for c in st.cycles))
            alone = self._behind_sends(theirs, statements, alone, scope)
        if scope == Scope.grid():
            self.lone_chain = self._beside_load(loads, load) + compute + latency(store)
        return load + compute + self._shared_store(loads, store, stores, alone)

    @staticmethod
    def _behind_sends(
        theirs: list[tuple[Load, prim.TransferSpec]],
        statements: list[Statement],
        popped: Expr,
        scope: Scope,
    ) -> Expr:
        """How long the other engine's reads of the next pass run before the store
        starts, when that engine ends its part of each pass with a multicast (LayerNorm's
        bias after the row's chunk, on the reader) and its blocks have two slots
        (b_load = 1): its sender reads that block as one stream against every core's
        writes, so a read that meets the store ends with it, and its sends follow; the
        compute waits for them, and only then does the engine start the next pass's
        reads, into the other slot. They run alone through the compute from the first
        statement that reads the multicast block to the end of the body, not from the
        pop of their blocks (`popped`, one slot: b_load = 0). `theirs`: the other
        engine's loads of the scope, in program order."""
        if not theirs or not theirs[-1][1].multicast:
            return popped
        name = theirs[-1][0].result.name
        first = next((i for i, st in enumerate(statements) if name in st.reads), None)
        if first is None:
            return popped
        ahead = add(*(c for st in statements[first:] for c in st.cycles))
        return select(knob("b_load", scope).eq(1), maximum(popped, ahead), popped)

    def lone_store(self, pipe: Pipe) -> None:
        """With two load blocks (b_load = 1) the other engine reads wave i + 2 when the
        body pops wave i's blocks, i.e. beside wave i's store (`store_chain`): it read
        wave 2 right after wave 1, while the store engine was still loading, so besides
        the last wave's store (`sequential`), the one before it runs alone too. Once per
        program, when the grid pipe's chain (`store_chain`) is that of a store engine
        that loads: that pass at its chain with the store alone. RMSNorm with a residual
        4096×2048 on Wormhole, x8_y8 (two waves), the simulator's writer: `res` 93.6k
        cycles, then the compute, then the first wave's `out` and `h_out` in 105k with
        two load blocks (the reader read wave 2 during `res`), 127k beside the reader's
        wave 2 with one."""
        lone = self.lone_chain
        if lone is None or pipe.name != Scope.grid().key or pipe.chain == Const(0):
            return
        saved = latency(pipe) - latency(replace(pipe, chain=lone))
        what = "the store before the last wave's, alone: the other engine read ahead"
        once = minimum(self.waves - 1, 1) * select(pipe.b_load.eq(1), saved, 0)
        self.fills.append(Term("fill", what, Const(0) - once))

    def _beside_load(self, loads: list[prim.TransferSpec], load: Expr) -> Expr:
        """The store engine's loads of a pass beside the other engine's reads of the
        next one (`lone_store`): a bank serves each stream fairly, so at least the read
        latency + ω_l + min(ω_l, ω_r), ω_l its loads' DRAM-wide time, ω_r theirs; at least
        its own load stage `load` (a load bound by its links leaves the banks room)."""
        own = [prim.dram_wide(self.arch, t) for t in loads if t.engine == self.store_engine]
        theirs = [prim.dram_wide(self.arch, t) for t in loads if t.engine != self.store_engine]
        if not own or not theirs:
            return load
        beside = add(*own) + minimum(add(*own), add(*theirs))
        return maximum(load, self.arch.dram.read_latency_cycles + beside)

    def _one_store_block(
        self,
        ops: tuple[Op, ...],
        loads: list[prim.TransferSpec],
        stores: list[prim.TransferSpec],
    ) -> Expr:
        """With one block per stored value (b_store = 0), the statement that computes a
        stored block in pass i + 1 reserves it only once pass i's write of it has left:
        per pass at least that statement (with its inline ops) and the write, beside the
        other engine's reads of the next pass, which start when the body pops their
        blocks, i.e. with it (nothing alone). The largest over the stored values; the
        body's other statements run during the write (the compute runs in program
        order, so those before the statement wait only for their own blocks)."""
        statements = lowered_statements(
            self, [op for op in ops if not isinstance(op, (Load, Store))]
        )
        chains: list[Expr] = []
        stored = [op.value.name for op in ops if isinstance(op, Store)]
        for name, t in zip(stored, stores, strict=True):
            made = [add(*st.cycles) for st in statements if name in st.computes]
            terms, cycles = prim.dram_write_stage(self.arch, (t,))
            write = self._shared_store(loads, Stage("store", terms, cycles), [t], Const(0))
            chains.append(add(*made, write))
        return maximum(*chains)

    def _shared_store(
        self,
        loads: list[prim.TransferSpec],
        store: Stage,
        stores: list[prim.TransferSpec],
        alone: Expr,
    ) -> Expr:
        """The store stage of a load-body-store chain, beside the other engines' reads of
        the next pass: they start `alone` cycles of compute before it, and a bank serves
        each stream fairly, so the store's DRAM time ω_w (`dram_wide`) stretches by
        min(ω_w, ω_r − alone), ω_r the DRAM time of those reads, then its write latency;
        at least the store stage itself. 0 when the store runs in the body
        (`place_store`)."""
        if not store.terms or not stores:
            return latency(store)
        reads = [prim.dram_wide(self.arch, t) for t in loads if t.engine != self.store_engine]
        if not reads:
            return latency(store)
        written = add(*(prim.dram_wide(self.arch, t, write=True) for t in stores))
        rest = maximum(add(*reads) - alone, 0)
        shared = written + minimum(written, rest) + self.arch.dram.write_latency_cycles
        return maximum(latency(store), shared)

    def store_apart(
        self,
        loads: list[prim.TransferSpec],
        stores: list[prim.TransferSpec],
        ops: tuple[Op, ...],
        in_body: bool,
    ) -> bool:
        """Whether the pipe's store stage runs on an engine that does nothing else in
        the pass: none of its loads, its inner loops' or its gathers (the writer
        gathers; `Pipe.store_apart`). Then a single store block holds back only the next
        body, not the next loads."""
        engines = {t.engine for t in loads} | self.inner_load_engines(ops)
        gathers = any(isinstance(op, Gather) for op in walk(ops))
        return bool(stores) and not in_body and not gathers and self.store_engine not in engines

    @staticmethod
    def own_loads(ops: tuple[Op, ...]) -> list[Load]:
        """The loads issued in this scope itself, in program order (not its loops')."""
        return [op for op in ops if isinstance(op, Load)]

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
