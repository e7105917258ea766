"""Primitive latency terms, each an expression of the tile symbols (paper §2.6).

Every number comes from the architecture description; this module only says how the
numbers combine:

* a DRAM read of `bytes` by one core costs the read latency plus bytes over the
  bandwidth that core gets: its own reader throughput, capped (for a multicast) by the
  multicast throughput;
* all cores of a stage read at once, so the stage also takes at least the bytes of all
  concurrent readers over the DRAM's achievable aggregate bandwidth; a stage costs the
  larger of the per-core and the DRAM-wide figure;
* a multicast adds a sender/receiver handshake; a gather costs the owner one handshake
  and one unicast transfer per partial it receives;
* a compute operation costs its per-tile cycles over the tiles it produces (matmul:
  tile-matmuls by math fidelity), plus unpacking the tiles it reads from L1 buffers and
  packing the tiles it writes to one.

Bandwidths are real numbers; latencies are whole cycles computed as
ceildiv(bytes * 1000, round(bandwidth * 1000)).
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.ir.problem import Term
from loom.symbolic import Const, Expr, ceildiv, maximum

SCALE = 1000


def cycles_at(nbytes: Expr, bytes_per_cycle: float) -> Expr:
    return ceildiv(nbytes * SCALE, max(1, round(bytes_per_cycle * SCALE)))


@dataclass(frozen=True)
class TransferSpec:
    """One DRAM transfer of a stage, as each core sees it."""

    what: str
    nbytes: Expr
    tiles: Expr
    concurrent: int
    """Cores issuing this transfer at the same time (DRAM-wide load)."""
    multicast: bool = False


def dram_read_stage(arch: Arch, transfers: tuple[TransferSpec, ...]) -> tuple[tuple[Term, ...], Expr]:
    """Terms and total cycles of a load stage issued back to back by one engine."""
    if not transfers:
        return (), Const(0)
    terms = []
    per_core: Expr = Const(0)
    dram_bytes: Expr = Const(0)
    latency = 0
    for t in transfers:
        bw = arch.dram.reader_bytes_per_cycle
        kind = "dram_read"
        lat = arch.dram.read_latency_cycles
        if t.multicast:
            bw = min(bw, arch.noc.multicast_bytes_per_cycle)
            kind = "multicast"
            lat += arch.fixed.semaphore_cycles + arch.noc.read_latency_cycles
        cycles = cycles_at(t.nbytes, bw) + t.tiles * arch.noc.issue_cycles
        terms.append(Term(kind, t.what, cycles + lat))
        per_core = per_core + cycles
        dram_bytes = dram_bytes + t.nbytes * t.concurrent
        latency = max(latency, lat)
    dram_wide = cycles_at(dram_bytes, arch.dram.peak_bytes_per_cycle * arch.dram.efficiency)
    return tuple(terms), latency + maximum(per_core, dram_wide)


def dram_write_stage(arch: Arch, transfers: tuple[TransferSpec, ...]) -> tuple[tuple[Term, ...], Expr]:
    if not transfers:
        return (), Const(0)
    terms = []
    per_core: Expr = Const(0)
    dram_bytes: Expr = Const(0)
    for t in transfers:
        cycles = cycles_at(t.nbytes, arch.noc.unicast_bytes_per_cycle) + t.tiles * arch.noc.issue_cycles
        terms.append(Term("dram_write", t.what, cycles + arch.dram.write_latency_cycles))
        per_core = per_core + cycles
        dram_bytes = dram_bytes + t.nbytes * t.concurrent
    dram_wide = cycles_at(dram_bytes, arch.dram.peak_bytes_per_cycle * arch.dram.efficiency)
    return tuple(terms), arch.dram.write_latency_cycles + maximum(per_core, dram_wide)


def gather_term(arch: Arch, what: str, nbytes: Expr, sources: int) -> Term:
    """The owner receives one partial from each other core of its group."""
    per_partial = cycles_at(nbytes, arch.noc.unicast_bytes_per_cycle) + arch.fixed.semaphore_cycles
    cycles = arch.noc.read_latency_cycles + per_partial * max(sources - 1, 0)
    return Term("gather", what, cycles)


def matmul_term(arch: Arch, fidelity: str, what: str, m: Expr, n: Expr, k: Expr) -> Term:
    """m x n output tiles, k tiles deep: m*n*k tile-matmuls at the fidelity's rate."""
    return Term("matmul", what, m * n * k * arch.matmul.cycles(fidelity))


def eltwise_term(arch: Arch, op: str, what: str, tiles: Expr) -> Term:
    return Term("eltwise", what, tiles * arch.compute.eltwise(op))


def reduce_term(arch: Arch, op: str, what: str, tiles: Expr) -> Term:
    return Term("reduce", what, tiles * arch.compute.reduce(op))


def pack_term(arch: Arch, what: str, tiles: Expr) -> Term:
    """Write a result to its L1 buffer (and start one compute sequence)."""
    return Term("pack", what, tiles * arch.compute.pack_cycles_per_tile + arch.compute.op_overhead_cycles)


def unpack_term(arch: Arch, what: str, tiles: Expr) -> Term:
    return Term("unpack", what, tiles * arch.compute.unpack_cycles_per_tile)
