"""Single-slot loads (b_load = 0): what a block with one slot costs when the compute
pops it after its last reader, in a loop body (`unheld`) and for a grid load held
around a steady loop (`pop_stall`, `single_slot_fill`)."""

from __future__ import annotations

import functools

from loom.ir.problem import Pipe, Seq, latency
from loom.ir.tile import (
    ExpandDims,
    ForLoop,
    Gather,
    If,
    Load,
    Op,
    Store,
    read_values,
    unread_results,
    walk,
)
from loom.model import primitives as prim
from loom.model.compute import Compute
from loom.model.statements import lowered_statements
from loom.model.transfers import Transfers
from loom.symbolic import Const, Expr, add, maximum


class Slots(Compute, Transfers):
    """Terms of blocks loaded into one slot."""

    @functools.cached_property
    def read(self) -> frozenset[str]:
        """Every value the program reads (`read_values`), walked once per candidate."""
        return read_values(self.program.body)

    def peeled(self, loop: ForLoop) -> bool:
        """Whether the lowering peels `loop`'s last iteration (`unread_results`): only
        then can a block the loop reads be popped before the loop ends."""
        return any(self.buffered_value(c.init) for c in unread_results(loop, self.read))

    def held_through(self, loop: ForLoop, ops: tuple[Op, ...], loads: list[Load]) -> list[Load]:
        """The grid loads of `ops` whose block the compute still holds when `loop` runs:
        read in the loop's body or after it. A block read only before the loop is popped
        after its last reader there (`loom.lower.waits`), so even with one slot its engine
        loads the next wave's block during this wave, as with two: flash decode's q, which
        the hoisted score scale (`loom.frontend.hoist`) reads once per wave before the key
        loop, the loop reading the scaled copy."""
        alias = {op.result.name: op.operand.name for op in walk(ops) if isinstance(op, ExpandDims)}

        def root(name: str) -> str:
            while name in alias:
                name = alias[name]
            return name

        at = next(i for i, op in enumerate(ops) if op is loop)
        later = {root(v) for v in read_values((loop, *ops[at + 1 :]))}
        return [op for op in loads if op.result.name in later]

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
        self,
        ops: tuple[Op, ...],
        loads: dict[str, prim.TransferSpec],
        ell: Expr,
        pipe_body: Seq,
        stores: tuple[prim.TransferSpec, ...] = (),
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
        load stage itself, and the term is not built (it is most of a GEMM's model).

        `stores` are the scope's stores, one per `Store` op in order. A slot freed by the
        statement that computes a stored value is refetched as that value's write
        starts, when the store engine loads nothing of the pass (it is free to write at
        once): the refetch shares the banks with the write (`primitives.write_wait`).
        SwiGLU 1024×14336 on Wormhole, x2x4_y2 [64, 1792], one slot each: `up` is read
        beside `out`'s write (37.1k cycles), then the statement (28.3k), 65.4k a pass in
        the simulator against 51.3k modeled (`up` alone: 15.7k)."""
        if any(isinstance(op, (ForLoop, Gather, If)) for op in ops):
            return Const(0)
        loaded = [op.result.name for op in ops if isinstance(op, Load)]
        if len(loaded) < 2 or not set(loaded) <= set(loads):
            return Const(0)
        body = lowered_statements(self, [op for op in ops if not isinstance(op, (Load, Store))])
        readers = {v: [i for i, st in enumerate(body) if v in st.reads] for v in sorted(loaded)}
        spans = {v: (idx[0], idx[-1]) for v, idx in readers.items() if idx}
        stage = tuple(loads.values())
        stored = [op.value.name for op in ops if isinstance(op, Store)]
        apart = all(t.engine != self.store_engine for t in stage)

        def written(last: int) -> tuple[prim.TransferSpec, ...]:
            """The stores whose write starts when statement `last` ends."""
            return tuple(
                t
                for name, t in zip(stored, stores, strict=True)
                if apart and name in body[last].computes
            )

        if all(span == (0, len(body) - 1) for span in spans.values()):
            return self._beside_write(stage, ell, written(len(body) - 1))
        cycles = []
        for v, (first, last) in spans.items():
            hold = (c for i in range(first, last + 1) for c in body[i].cycles)
            refill = prim.refill_cycles(self.arch, loads[v], stage, written(last))
            cycles.append(add(refill, *hold))
        m = latency(pipe_body)
        return ell + m - maximum(ell, m, *cycles)

    def _beside_write(
        self, stage: tuple[prim.TransferSpec, ...], ell: Expr, writes: tuple[prim.TransferSpec, ...]
    ) -> Expr:
        """`unheld` where every block is held from the body's first statement to its
        last, which computes a stored value: the engine refetches them all as that write
        starts, one blocking read after another, sharing the banks with it
        (`primitives.write_wait`), so the stage may take longer than ℓ; what it adds
        comes back negative (0 without such a write: GEMM's A and B). Residual add
        128×16384 on Wormhole, x6_y2 [32, 1376]: x read beside `out`'s write 10.9k
        cycles, h 5.2k (each 5.2k alone) in the simulator."""
        if not writes:
            return Const(0)
        own = add(*(prim.dram_wide(self.arch, t) for t in stage))
        streams = max(t.concurrent for t in stage)
        waits = sum(prim.load_latency(self.arch, t) for t in stage)
        beside = own + prim.write_wait(self.arch, own, streams, writes) + waits
        return ell - maximum(ell, beside)
