"""The compute terms of the ops: each op's primitive cost on the Tensix's three
overlapped threads (unpack, math, pack), a matmul accumulator's pack by its placement
and its final copy, and the copies of a loop's carried values."""

from __future__ import annotations

import functools

from loom.ir.buffers import PLACEMENTS
from loom.ir.geometry import TILE
from loom.ir.integers import converts_by_product
from loom.ir.problem import Term
from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Load,
    Matmul,
    Op,
    Reduce,
    Value,
    walk,
)
from loom.model import primitives as prim
from loom.model.core import HegCore, placement_knob
from loom.symbolic import Const, Expr, add, ceildiv, maximum, minimum


class Compute(HegCore):
    """Compute terms by op, built once per compile (`ops`)."""

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

    def op_terms(self, op: Op) -> list[Term]:
        """The compute terms of one op (its operands' layouts, the arch and the fidelity:
        not the candidate), built once per compile (`ops`)."""
        terms = self.ops.get(id(op))
        if terms is None:
            terms = self.ops[id(op)] = tuple(self._evaluations(op, self._op_terms(op)))
        return list(terms)

    def _evaluations(self, op: Op, terms: list[Term]) -> list[Term]:
        """`terms` times the statements that evaluate the op: a stored value other ops
        read is rebuilt inline in each of their statements, with the operands it
        computes inline (`BufferedProgram.rebuilt`)."""
        results = op.results() if not isinstance(op, ForLoop) else ()
        again = self.b.rebuilt.get(results[0].name, 0) if results else 0
        if not again:
            return terms
        return [
            Term(t.kind, f"{t.what} (evaluated {again + 1} times)", t.cycles * (again + 1))
            for t in terms
        ]

    def _op_terms(self, op: Op) -> list[Term]:
        arch, terms = self.arch, []
        where = f"line {getattr(op, 'line', 0)}"
        match op:
            case Matmul(result=r, lhs=a):
                m, n, k = self.matmul_tiles(op)
                terms.append(
                    prim.matmul_term(arch, self.fidelity, f"matmul {r.name} ({where})", m, n, k)
                )
                if op.lhs_transposed:  # `x.T @ g`: a copy pass transposing the lhs tiles
                    what = f"transpose {a.name} ({where})"
                    terms.append(prim.eltwise_term(arch, "copy", what, self.layout(a).tiles))
            case Elementwise(result=r, op=kind):
                terms.append(
                    prim.eltwise_term(arch, kind, f"{kind} {r.name} ({where})", self.tiles(r))
                )
            case Reduce(result=r, op=kind, operand=x):
                terms.append(
                    prim.reduce_term(arch, kind, f"reduce-{kind} {r.name} ({where})", self.tiles(x))
                )
            case Full(result=r) if not self.buffered_value(r):
                # computed inline in its reader's statement: the math thread fills Dst
                # (a copy per tile), the statement's one pack writes the result
                what = f"fill {r.name} ({where}, inline)"
                return [prim.eltwise_term(arch, "copy", what, self.tiles(r))]
            case Full(result=r):
                size = self.tile_bytes(r.dtype)
                terms.append(prim.pack_term(arch, f"fill {r.name} ({where})", self.tiles(r), size))
                return terms
            case Convert(result=r, operand=x) if x.name in self.accumulated:
                return [self.final_copy(r, x)]
            case Convert(result=r, operand=x) if converts_by_product(x.dtype, r.dtype):
                terms.append(
                    prim.eltwise_term(
                        arch, "mul", f"int32->{r.dtype} {r.name} ({where})", self.tiles(r)
                    )
                )
            case Convert(result=r, operand=x) if self.copied(r, x):
                # a block converted into a block of its own (`x[tile, :].float()` read by
                # several statements): the lowering copies it, a compute statement like any
                # other; a computed value converts in its producer's pack, for free
                what = f"{r.dtype} copy {r.name} ({where})"
                terms.append(prim.eltwise_term(arch, "copy", what, self.tiles(r)))
            case Convert() | ExpandDims():
                ops = self.fused(op)
                if ops is not None and ops[0] is op and len(ops) > 1:
                    # the root of a statement (a result converted into its block)
                    return [self.statement(op, [], ops)]
                return terms
            case _:
                return terms
        return [self.overlapped(op, terms)]

    def copied(self, result: Value, operand: Value) -> bool:
        """Is a conversion a copy from one block into another (both kept in L1, in
        different buffers), rather than a format change inside one statement?"""
        src, dst = self.b.buffer_of(operand.name), self.b.buffer_of(result.name)
        return src is not None and dst is not None and src is not dst

    def matmul_tiles(self, op: Matmul) -> tuple[Expr, Expr, Expr]:
        """The (m, n, k) tile counts of a matmul, its transposed operands read as such."""
        la, lb = self.layout(op.lhs), self.layout(op.rhs)
        n = ceildiv(lb.rows, TILE) if op.rhs_transposed else lb.tile_cols
        if op.lhs_transposed:
            return la.tile_cols, n, ceildiv(la.rows, TILE)
        return la.tile_rows, n, la.tile_cols

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
        fused = self.fused(op)
        if fused is not None:
            return self.statement(op, math, fused)
        unpack: list[Expr] = []
        edges: Expr = Const(0)
        if isinstance(op, Matmul):
            m, n, k = self.matmul_tiles(op)
            lhs_unpack = arch.compute.unpack_cycles(self.tile_bytes(op.lhs.dtype))
            per = lhs_unpack + arch.compute.unpack_cycles(self.tile_bytes(op.rhs.dtype))
            unpack.append(m * n * k * per)
            if op.lhs_transposed:
                unpack.append(self.layout(op.lhs).tiles * lhs_unpack)
            drain = [self.pack_cycles(v) for v in op.results() if self.buffered_value(v)]
            edges = add(Const(per), *drain)
        else:
            unpack += [self.tiles(v) * per for v, per in self.unpacked(op)]
        pack: list[Expr] = [
            self.tiles(v) * self.pack_cycles(v) for v in op.results() if self.buffered_value(v)
        ]
        parts = [add(*(t.cycles for t in math))]
        parts += [add(*unpack)] if unpack else []
        if pack:
            # the pack of a statement runs beside the math of the ops computed inline in
            # it (their own terms, charged where they stand): only its excess is charged
            parts.append(add(*pack) - add(Const(0), *self.inline_cycles(op)))
        overhead = arch.compute.op_overhead_cycles if pack else 0
        first = math[0]
        what = first.what + (" (unpack, math and pack overlapped)" if len(parts) > 1 else "")
        return Term(first.kind, what, maximum(*parts) + overhead + edges)

    def unpacked(self, op: Op) -> list[tuple[Value, int]]:
        """The operands of an elementwise op or a reduction that the unpackers read from
        L1 (those kept in a buffer), with the cycles of one tile's unpack."""
        return [
            (v, self.arch.compute.unpack_cycles(self.tile_bytes(v.dtype)))
            for v in op.operands()
            if self.buffered_value(v)
        ]

    def fused(self, op: Op) -> tuple[Op, ...] | None:
        """The lowered Compute statement `op` belongs to, when it is one without a
        matmul: its root (the op whose result has a buffer) first, then the ops computed
        inline in it (`inline_cycles`); None for a statement with a matmul, whose
        accumulator and per-K-step fill and drain `overlapped` costs op by op."""
        ops = self.statement_ops.get(id(op))
        if ops is None or any(isinstance(o, Matmul) for o in ops):
            return None
        return ops

    def statement(self, op: Op, math: list[Term], ops: tuple[Op, ...]) -> Term:
        """One op of a fused statement, as the Tensix runs it: the three threads run over
        the whole chain tile by tile, so the statement costs its overhead + max(Σ unpack,
        Σ math, pack) + the pipeline's fill (one tile-operation's unpack, the ops' mean)
        and drain (one result tile's pack) (`loom.sim.compute_cost`). An inline op keeps
        its math where it stands; the root charges the rest, with the copies the lowering
        adds (`broadcasts`)."""
        own = add(Const(0), *(t.cycles for t in math))
        if op is not ops[0]:
            return Term(math[0].kind, math[0].what + " (inline)", own)
        compute = self.arch.compute
        sums: list[Expr] = [own]
        unpack: list[Expr] = []
        per_tile: list[int] = []
        for o in ops:
            copies, parts = self.broadcasts(o)
            unpack += [tiles * per for tiles, per in parts]
            sums += copies
            per_tile += [0] * len(copies)  # a copy's tile-operations unpack nothing
            terms = [] if o is op else self.op_terms(o)
            sums += [t.cycles for t in terms]
            if o is op or terms:
                per_tile.append(sum(per for _, per in parts))
        results = [v for v in op.results() if self.buffered_value(v)]
        pack = add(*(self.tiles(v) * self.pack_cycles(v) for v in results))
        fill = Const(sum(per_tile) // max(len(per_tile), 1))
        drain = add(*(self.pack_cycles(v) for v in results))
        busiest = maximum(add(*sums), add(Const(0), *unpack), pack)
        inline = add(Const(0), *(t.cycles for o in ops[1:] for t in self.op_terms(o)))
        edges = Const(compute.op_overhead_cycles) + fill + drain
        first = (
            math[0] if math else Term("pack", f"{type(op).__name__.lower()} {results[0].name}", own)
        )
        what = first.what + " (its statement: unpack, math and pack overlapped)"
        return Term(first.kind, what, busiest + edges - inline)

    def broadcasts(self, op: Op) -> tuple[list[Expr], list[tuple[Expr, int]]]:
        """What an op's operands cost its statement beyond the op's own math: each
        operand kept in L1 is unpacked (a column or row vector broadcast over the result
        unpacks a result's worth of tiles), and the math thread copies a broadcast vector
        and fills a scalar over the result's tiles (`loom.lower.exprs`: `BroadcastExpr`,
        `FillExpr`); the tiles and one tile's unpack cycles of each read."""
        if not isinstance(op, Elementwise):
            return [], [(self.tiles(v), per) for v, per in self.unpacked(op)]
        out = self.layout(op.result)
        copy = self.arch.compute.eltwise("copy")
        copies: list[Expr] = []
        reads: list[tuple[Expr, int]] = []
        for arg in op.args:
            if not isinstance(arg, Value):
                copies.append(out.tiles * copy)
                continue
            lay = self.layout(arg)
            row = not lay.vector and lay.rows == Const(1) and lay.batch == Const(1)
            wide = not out.vector and (lay.vector or (row and out.rows != Const(1)))
            tiles = out.tiles if wide else lay.tiles
            if wide:
                copies.append(out.tiles * copy)
            if self.buffered_value(arg):
                reads.append((tiles, self.arch.compute.unpack_cycles(self.tile_bytes(arg.dtype))))
        return copies, reads

    @functools.cached_property
    def statement_ops(self) -> dict[int, tuple[Op, ...]]:
        """Each op's lowered Compute statement, by op identity: a root (an op with a
        buffered result) and the ops computed inline in it, root first."""
        out: dict[int, tuple[Op, ...]] = {}
        for root in walk(self.program.body):
            if isinstance(root, (Load, ForLoop)) or not any(
                self.buffered_value(v) for v in root.results()
            ):
                continue
            ops, seen = [root], {id(root)}
            todo = [v for v in root.operands() if not self.buffered_value(v)]
            while todo:
                producer = self.producers.get(todo.pop().name)
                if producer is None or id(producer) in seen:
                    continue
                seen.add(id(producer))
                ops.append(producer)
                todo += [v for v in producer.operands() if not self.buffered_value(v)]
            for o in ops:
                out.setdefault(id(o), tuple(ops))
        return out

    def inline_cycles(self, op: Op) -> list[Expr]:
        """The terms of the ops computed inline in `op`'s statement (`statement_ops`: the
        producers of its operands that have no buffer, recursively)."""
        ops = self.statement_ops.get(id(op), (op,))
        return [t.cycles for o in ops[1:] for t in self.op_terms(o)] if ops[0] is op else []

    @functools.cached_property
    def producers(self) -> dict[str, Op]:
        """The op computing each value, by name (loads, loops and stores excluded)."""
        return {
            r.name: op
            for op in walk(self.program.body)
            if not isinstance(op, (Load, ForLoop))
            for r in op.results()
        }

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

    def loaded_values(self) -> frozenset[str]:
        """Values read from DRAM by a Load."""
        return frozenset(op.result.name for op in walk(self.program.body) if isinstance(op, Load))

    def stored_load_copy(self, value: Value) -> list[Term]:
        """The copy of a loaded tile stored as it is (`out[tile, :n] = x[tile, :]`): the
        compute engine copies it from its load block into the store block (unpack, pack
        in the output's format, the operation's overhead and its last tile's pack); no
        term for a computed value (its op packs into the store block)."""
        if value.name not in self.loaded_values():
            return []
        compute = self.arch.compute
        size = self.tile_bytes(value.dtype)
        unpack, pack = compute.unpack_cycles(size), compute.pack_cycles(size)
        cycles = self.tiles(value) * max(unpack, pack) + compute.op_overhead_cycles + pack
        return [Term("pack", f"copy {value.name} into its store block", cycles)]

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
