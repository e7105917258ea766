"""Primitive latency terms, each an expression of the tile symbols (paper §2.6).

Every number comes from the architecture description; this module only says how the
numbers combine:

* a DRAM read of `bytes` by one core costs the read latency plus bytes over that
  core's reader throughput; a multicast sender then also sends the block to its group
  at the (linked) multicast throughput — read and send one after the other, as the
  lowered program does — and the receivers wait for the same time;
* the two data-movement engines (reader on NoC0, writer on NoC1) load in parallel: a
  stage takes as long as its busier engine;
* all cores of a stage read at once, so the stage also takes at least the bytes of all
  concurrent readers over what DRAM delivers to the whole grid under contention (the
  measured all-cores figure, below the ideal-placement peak);
* the concurrent transfers of a stage share NoC links: every DRAM response travels from
  the banks to its reader along the reader's NoC, every multicast along its tree
  (`loom.arch.noc`), so the stage takes at least the bytes of its busiest link over the
  link bandwidth. A stage costs the largest of the per-engine, DRAM-wide and link figures;
* a multicast adds a sender/receiver handshake; a gather costs the owner one handshake
  and one unicast transfer per partial it receives;
* a compute operation costs its per-tile cycles over the tiles it produces (matmul:
  tile-matmuls by math fidelity), plus unpacking the tiles it reads from L1 buffers and
  packing the tiles it writes to one.

Transfers move whole tiles, so every transfer cost is linear in the number of tiles:
tiles x ceil(tile bytes / bandwidth) cycles. Rounding up per tile (under 1.1% for a 2 KB
tile at 22 B/cycle) keeps the latency expressions free of large divisions, which is
what lets CP-SAT solve them quickly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from loom.arch import Arch
from loom.arch.noc import Link, LinkLoad
from loom.ir.problem import Term
from loom.symbolic import Const, Expr, add, maximum


def per_tile(tile_bytes: float, bytes_per_cycle: float) -> int:
    """Cycles to move one tile at a bandwidth, rounded up."""
    return math.ceil(tile_bytes / bytes_per_cycle)


def dram_grid_rate(arch: Arch) -> float:
    """Bytes per cycle DRAM serves to all concurrent cores together."""
    return min(
        arch.dram.peak_bytes_per_cycle * arch.dram.efficiency, arch.dram.all_cores_bytes_per_cycle
    )


@dataclass(frozen=True)
class TransferSpec:
    """One DRAM transfer of a stage, as each core sees it."""

    what: str
    tile_bytes: int
    tiles: Expr
    concurrent: int
    """Cores issuing this transfer at the same time (DRAM-wide load)."""
    multicast: bool = False
    engine: str = "reader"
    links: LinkLoad = ()
    """Bytes each NoC link carries, all concurrent cores together, per byte of this
    transfer one core moves (`loom.arch.noc`)."""


def link_bound(arch: Arch, transfers: tuple[TransferSpec, ...]) -> Expr:
    """Cycles the busiest NoC link needs for the stage's bytes.

    Each link's load is a sum over the transfers (tiles x tile bytes x the link's share);
    links whose shares are all at most another link's are dropped, so the maximum has one
    argument per non-dominated link."""
    rate = arch.noc.link_effective_bytes_per_cycle
    vectors: dict[Link, list[float]] = {}
    for i, t in enumerate(transfers):
        for link, share in t.links:
            vectors.setdefault(link, [0.0] * len(transfers))[i] += share
    distinct = sorted({tuple(round(v, 6) for v in vec) for vec in vectors.values()}, reverse=True)
    kept: list[tuple[float, ...]] = []
    for vec in distinct:
        if not any(all(a >= b for a, b in zip(k, vec, strict=True)) for k in kept):
            kept.append(vec)
    if not kept:
        return Const(0)
    sums = [
        add(
            *(
                t.tiles * per_tile(t.tile_bytes * share, rate)
                for t, share in zip(transfers, vec, strict=True)
                if share > 0
            )
        )
        for vec in kept
    ]
    return maximum(*sums)


def dram_read_stage(
    arch: Arch, transfers: tuple[TransferSpec, ...]
) -> tuple[tuple[Term, ...], Expr]:
    """Terms and total cycles of a load stage issued back to back by one engine."""
    if not transfers:
        return (), Const(0)
    terms = []
    per_engine: dict[str, Expr] = {}
    latency = 0
    dram_rate = dram_grid_rate(arch)
    dram_wide: Expr = Const(0)
    for t in transfers:
        per = per_tile(t.tile_bytes, arch.dram.reader_bytes_per_cycle) + arch.noc.issue_cycles
        kind = "dram_read"
        lat = arch.dram.read_latency_cycles
        if t.multicast:
            per += per_tile(t.tile_bytes, arch.noc.multicast_linked_bytes_per_cycle)
            kind = "multicast"
            lat += arch.fixed.semaphore_cycles + arch.noc.read_latency_cycles
        cycles = t.tiles * per
        terms.append(Term(kind, f"{t.what} on the {t.engine}", cycles + lat))
        per_engine[t.engine] = per_engine.get(t.engine, Const(0)) + cycles
        dram_wide = dram_wide + t.tiles * per_tile(t.tile_bytes * t.concurrent, dram_rate)
        latency = max(latency, lat)
    links = link_bound(arch, transfers)
    if links != Const(0):
        terms.append(Term("noc_links", "busiest NoC link of the stage", links))
    return tuple(terms), latency + maximum(*per_engine.values(), dram_wide, links)


def dram_write_stage(
    arch: Arch, transfers: tuple[TransferSpec, ...]
) -> tuple[tuple[Term, ...], Expr]:
    if not transfers:
        return (), Const(0)
    terms = []
    per_core: Expr = Const(0)
    dram_wide: Expr = Const(0)
    dram_rate = dram_grid_rate(arch)
    for t in transfers:
        per = per_tile(t.tile_bytes, arch.noc.unicast_bytes_per_cycle) + arch.noc.issue_cycles
        cycles = t.tiles * per
        terms.append(Term("dram_write", t.what, cycles + arch.dram.write_latency_cycles))
        per_core = per_core + cycles
        dram_wide = dram_wide + t.tiles * per_tile(t.tile_bytes * t.concurrent, dram_rate)
    links = link_bound(arch, transfers)
    if links != Const(0):
        terms.append(Term("noc_links", "busiest NoC link of the stage", links))
    return tuple(terms), arch.dram.write_latency_cycles + maximum(per_core, dram_wide, links)


def gather_term(arch: Arch, what: str, tiles: Expr, tile_bytes: int, sources: int) -> Term:
    """The owner receives one partial from each other core of its group."""
    per_partial = (
        tiles * per_tile(tile_bytes, arch.noc.unicast_bytes_per_cycle) + arch.fixed.semaphore_cycles
    )
    cycles = arch.noc.read_latency_cycles + per_partial * max(sources - 1, 0)
    return Term("gather", what, cycles)


def matmul_term(arch: Arch, fidelity: str, what: str, m: Expr, n: Expr, k: Expr) -> Term:
    """m x n output tiles, k tiles deep: m*n*k tile-matmuls at the fidelity's rate."""
    return Term("matmul", what, m * n * k * arch.matmul.cycles(fidelity))


def eltwise_term(arch: Arch, op: str, what: str, tiles: Expr) -> Term:
    return Term("eltwise", what, tiles * arch.compute.eltwise(op))


def reduce_term(arch: Arch, op: str, what: str, tiles: Expr) -> Term:
    return Term("reduce", what, tiles * arch.compute.reduce(op))


def pack_term(arch: Arch, what: str, tiles: Expr, tile_bytes: int) -> Term:
    """Write a result to its L1 buffer (and start one compute sequence)."""
    per = arch.compute.pack_cycles(tile_bytes)
    return Term("pack", what, tiles * per + arch.compute.op_overhead_cycles)


def unpack_term(arch: Arch, what: str, tiles: Expr, tile_bytes: int) -> Term:
    return Term("unpack", what, tiles * arch.compute.unpack_cycles(tile_bytes))
