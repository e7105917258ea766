"""The grid's steady loops: a loop whose engines fetch the next wave's first blocks
during this wave shows its fill once per program (`steady_fill`), the compute around
it hides behind those loads (`behind_loads`), and an engine that also loads in the grid
body is busy across both scopes (`engine_occupancy`)."""

from __future__ import annotations

from loom.ir.problem import For, HegNode, Leaf, Pipe, Term, latency, sequential
from loom.ir.scope import Scope
from loom.ir.tile import ForLoop, Gather, If, Load, Op, Store
from loom.model import primitives as prim
from loom.model.core import knob
from loom.model.slots import Slots
from loom.symbolic import Const, add, maximum, minimum, select


class Steady(Slots):
    """Terms of the grid body's steady loops."""

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
        mine = [op for op in ops if isinstance(op, Load) and self.load_engine(op) in engines]
        held = self.held_through(loop, ops, mine)
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
        mine = [op for op in ops if isinstance(op, Load) and self.load_engine(op) in engines]
        held = self.held_through(loop, ops, mine)
        if held and loop.tile.name not in self.pop_charged:
            hidden = select(knob("b_load", scope).eq(1), hidden, 0)
        what = "compute outside the loop, hidden behind the loop's loads of the next wave"
        # the slack depends on the loop's load stage (copy modes); what hides never
        # exceeds the compute around the loop, which does not
        return Term("overlap", what, Const(0) - hidden, floor=Const(0) - add(*around))

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
