"""Build the Hierarchical Execution Graph of a candidate (paper §2.6).

    root  = launch ; for(waves, pipe_grid)
    pipe_s = pipe(loads of scope s, body_s, stores of scope s)
    body_s = compute ; for(trip, pipe_loop) ; compute ; gathers ; merge   (in program order)

Every block (the grid body, every inner loop body) is a pipe whose load stage holds the
loads issued in that scope and whose store stage holds its stores. A split reduction's
merge runs on the owner only and folds the partials one by one, so the operations that
read gathered values repeat once per partial.

The terms come from one module per term family, each a class over `core.HegCore`:
`transfers` (the loads' and stores' DRAM and NoC specs), `compute`, `reductions`
(gathers and merges), `banks` (banks shared by one pass), `stores` (where the store
stage runs), `slots` (single-slot loads) and `steady` (the grid's steady loops);
`HegBuilder` joins them and walks the program.
"""

from __future__ import annotations

from loom.ir.problem import For, HegNode, Leaf, Pipe, Seq, Stage, Term
from loom.ir.scope import Scope
from loom.ir.tile import ForLoop, Gather, If, Load, Op, Store
from loom.model import primitives as prim
from loom.model.banks import Banks
from loom.model.core import knob
from loom.model.reductions import Reductions
from loom.model.steady import Steady
from loom.model.stores import Stores
from loom.symbolic import Const, Expr


class HegBuilder(Steady, Stores, Banks, Reductions):
    """The HEG of one candidate (`build`)."""

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
                pending.extend(self.stored_load_copy(op.value))
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
        unheld = self.unheld(
            ops, dict(zip(names, loads, strict=True)), load_cycles, body, tuple(stores)
        )
        chain = self.store_chain(ops, loads, body, store, stores, scope)
        pipe = Pipe(
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
            chain=chain,
            store_apart=self.store_apart(loads, stores, ops, serial),
            **self.pass_dram(stores, serial, scope, load_cycles, body, loops),
        )
        self.lone_store(pipe)
        return pipe
