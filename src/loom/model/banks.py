"""Banks shared by one pass: the least time a pipe's pass takes for its DRAM traffic,
its loads' and stores' and its inner loops' together, and what the previous pass's
stores make its reads wait (`Pipe.dram`, `Pipe.stall`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from loom.arch import Arch
from loom.ir.problem import HegNode, Pipe, Term, latency
from loom.ir.scope import Scope
from loom.model import primitives as prim
from loom.model.core import HegCore, knob
from loom.symbolic import Const, Expr, add, ceildiv, maximum, minimum, select


class Reads(NamedTuple):
    """One load engine's reads in one pass."""

    own: Expr
    """DRAM-wide time ω_e (`primitives.dram_wide`)."""
    sends: Expr
    """Multicast send time S_e."""
    streams: int
    """Read streams n_e: the cores reading at once."""
    waits: Expr
    """The latencies the engine waits for its loads of this pass itself, one per load
    (each a blocking read: `primitives.dram_read_stage`); an inner loop's are its own
    pipe's (`times`)."""
    alone: Expr
    """D_e: the engine's reads with no other core at the banks (`primitives.dram_alone`)."""

    def plus(self, other: Reads) -> Reads:
        return Reads(
            self.own + other.own,
            self.sends + other.sends,
            max(self.streams, other.streams),
            self.waits + other.waits,
            self.alone + other.alone,
        )

    def chain(self, written: Expr, writers: int) -> Expr:
        """The least one pass takes on this engine. In lockstep (every core waits its
        latencies L_e at once, then all read together) it is L_e + S_e + ω_e + W. But a
        core's reads are a closed network's customer: it waits L_e (think time) and holds
        the banks D_e, and queues there only behind the other cores that are at the banks,
        not waiting their own latencies. The other cores' bank time, B = (ω_e + W) ·
        (n_e - 1) / n_e, then delays it by B times the share of their pass they spend at
        the banks, which in lockstep is (D_e + B) / (D_e + B + L_e): one step of the
        fixed point R = D_e + B · R / (R + L_e) from the lockstep start, so never below
        that fixed point nor above lockstep (whose sum holds D_e twice when the engine's
        stream is slower than the banks, hence the minimum). A one-tile residual add pass
        of 64 Wormhole cores: lockstep 768 + 982 + 818 = 2 568, this 2 229 (simulated
        1 870, of which the one-page write at 1 / write_efficiency, 818 against the
        simulator's 491, holds 286)."""
        wait = minimum(written, ceildiv(self.own * writers, self.streams))
        n = max(self.streams, 1)
        lockstep = self.waits + self.sends + self.own + wait
        others = ceildiv((self.own + wait) * (n - 1), n)
        held = self.alone + others
        queued = ceildiv(others * held, held + self.waits)
        drift = self.waits + self.sends + self.alone + select(held.gt(0), queued, 0)
        return minimum(lockstep, drift)


_NO_READS = Reads(Const(0), Const(0), 0, Const(0), Const(0))


@dataclass(frozen=True)
class EngineReads:
    """Per load engine, one pass's reads (`Reads`)."""

    engines: dict[str, Reads]

    @staticmethod
    def of(arch: Arch, loads: list[prim.TransferSpec]) -> EngineReads:
        out: dict[str, Reads] = {}
        for t in loads:
            read = Reads(
                prim.dram_wide(arch, t),
                prim.send_time(arch, t),
                t.concurrent,
                Const(prim.load_latency(arch, t)),
                prim.dram_alone(arch, t),
            )
            out[t.engine] = out.get(t.engine, _NO_READS).plus(read)
        return EngineReads(out)

    def times(self, trip: Expr) -> EngineReads:
        return EngineReads(
            {
                e: Reads(trip * r.own, trip * r.sends, r.streams, Const(0), trip * r.alone)
                for e, r in self.engines.items()
            }
        )

    def plus(self, *others: EngineReads) -> EngineReads:
        out = dict(self.engines)
        for other in others:
            for e, r in other.engines.items():
                out[e] = out.get(e, _NO_READS).plus(r)
        return EngineReads(out)


class Banks(HegCore):
    """Each pass's reads per load engine and its DRAM floor."""

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
          S_e plus ω_e + W (it cannot read while it sends) plus the latency of each of the
          pass's own loads (blocking reads: the banks serve other cores meanwhile), less
          the other cores' bank time those latencies overlap (`Reads.chain`). With
          unicast reads that holds whatever b_store is: the compute waiting for the
          store does not stop the engines reading the next pass. Where multicasts keep the
          cores together until then, the first wave's stores, every core's at once, still
          delay the next reads by W in full (once per program), except when the stores go
          one wave late: that wait is then the second wave's occupancy
          (`late_store_occupancy`, `late_store_ends`). In a straight-line pass whose
          store engine loads nothing, the engine reads the next pass beside the write
          whatever b_store is (one store block stops the compute, not the reads)."""
        if not stores or in_body:
            return {}  # the stages run in series on the engines (or there is no store)
        reads = self.pass_reads(scope.key)
        if not reads.engines:
            return {}
        written = add(*(prim.dram_wide(self.arch, t, write=True) for t in stores))
        banks = add(written, *(r.own for r in reads.engines.values()))
        writers = sum(t.concurrent for t in stores)
        own, sends, streams, _, _ = max(reads.engines.values(), key=lambda r: r.streams)
        wait = minimum(written, ceildiv(own * writers, streams))
        overlapped = knob("b_store", scope).eq(1)
        # every loading engine reads, sends and waits for the banks in turn (one engine
        # but for a writer that loads in the body, `place_store`), and for each of its
        # own loads' latency: a blocking read, so the banks serve others meanwhile
        chain = maximum(*(r.chain(written, writers) for r in reads.engines.values()))
        if sends == Const(0):
            # unicast reads: nothing paces the cores together, and whether or not the
            # compute waits for the store (b_store), the writer stores while the engines
            # read the next pass's blocks
            return {"dram": maximum(banks, chain)}
        # one store block (b_store = 0) stops the compute, not the reads: in a
        # straight-line pass whose store engine loads nothing, the other engine reads
        # the next pass when the body pops its blocks, i.e. with the write
        # (`Stores.store_chain`), whatever b_store is
        reader_only = not loops and self.store_engine not in reads.engines
        drift = chain if reader_only else select(overlapped, chain, 0)
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
