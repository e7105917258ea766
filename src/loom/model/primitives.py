"""Primitive latency terms, each an expression of the tile symbols (paper §2.6).

Every number comes from the architecture description; this module only says how the
numbers combine:

* a DRAM read of `bytes` by one core costs the read latency plus bytes over that
  core's reader throughput; a multicast sender then also sends the block to its group
  — read and send one after the other, as the lowered program does — and the
  receivers wait for the same time;
* the two data-movement engines (reader on NoC0, writer on NoC1) load in parallel: a
  stage takes as long as its busier engine;
* all cores of a stage read at once, so the stage also takes at least the bytes of all
  concurrent readers over what the banks deliver together; when the concurrent blocks
  cover few tile columns of a tensor whose width is a multiple of the bank count, their
  pages fall on a few banks only (pages interleave round-robin in row-major tile order),
  and those banks alone serve them (`BankSpread`);
* the concurrent transfers of a stage share NoC links: every DRAM response travels from
  the banks to its reader along the reader's NoC, every multicast along its tree
  (`loom.arch.noc`), so the stage takes at least the bytes of its busiest link over the
  link bandwidth. A stage costs the largest of the per-engine, DRAM-wide and link figures;
* a multicast sender sends each block after its read has landed, at the packet
  bandwidth plus one acknowledgement per receiver, and each send costs a handshake
  (ready, data, flag); a group spanning rows and columns is sent twice, along the
  sender's row and then over the other rows, as the lowering realizes it (`SendSpec`);
  a gather costs the owner one handshake
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
from fractions import Fraction

from loom.arch import Arch
from loom.arch.noc import Link, LinkLoad
from loom.ir.problem import Term
from loom.symbolic import Cond, Const, Expr, add, ceildiv, maximum, minimum, select


def per_tile(tile_bytes: float, bytes_per_cycle: float) -> int:
    """Cycles to move one tile at a bandwidth, rounded up."""
    return math.ceil(tile_bytes / bytes_per_cycle)


def dram_grid_rate(arch: Arch) -> float:
    """Bytes per cycle the banks serve together: their peak at the achievable efficiency.

    The measured all-cores figure (`dram.all_cores_bytes_per_cycle`, every core reading
    at once) is lower, but what lowers it is the NoC links the responses share, which
    the link term computes from the routes of the actual pattern (a quarter of the cores
    reading, or the responses on both NoCs, load the links quite differently)."""
    return arch.dram.peak_bytes_per_cycle * arch.dram.efficiency


@dataclass(frozen=True)
class BankSpread:
    """Which DRAM banks the concurrent cores' blocks of one transfer fall on.

    Pages (tiles) of a tensor `C` tiles wide interleave round-robin over `nb` banks in
    row-major order: tile (r, c) is in bank (r·C + c) mod nb. Rows step the bank by C mod
    nb, so their first banks are the multiples of `period` = gcd(C, nb), nb / period
    distinct ones. A union of blocks `cols` tiles wide in all (every concurrent core's
    column window together) over at least nb / period rows therefore touches
    nb · min(1, cols / period) banks; over fewer rows, rows · cols of them at most."""

    rows: Expr
    """Tile rows of one core's block."""
    period: int
    col_blocks: int
    """Distinct column blocks the concurrent cores access at once."""
    row_blocks: int
    """Distinct row blocks the concurrent cores access at once."""


@dataclass(frozen=True)
class SendSpec:
    """One send of a multicast block: to `receivers` cores, the farthest `span` hops
    from the sender. A group whose area spans rows and columns is sent twice (along the
    sender's row, then over the other rows: `loom.ir.multicast.multicast_pipes`)."""

    receivers: int
    span: int


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
    banks: BankSpread | None = None
    """Where its pages fall; None: evenly over every bank."""
    read_links: LinkLoad = ()
    """The part of `links` that its DRAM reads load (a multicast's tree left out)."""
    sends: tuple[SendSpec, ...] = ()
    """A multicast sender's sends of each block, one after the other, as lowered."""
    narrow: tuple[tuple[Cond, float], ...] = ()
    """Where each core's block stays on a few banks (`transfers.Transfers.narrow_reads`): per
    block width (the condition), the busiest of those banks' routes (bytes per byte one
    core reads, `loom.arch.noc.bank_read_peak`), in place of `read_links`."""


def dram_wide(arch: Arch, t: TransferSpec, write: bool = False) -> Expr:
    """Cycles DRAM needs for one transfer of every concurrent core.

    A written byte holds a bank 1 / `dram.write_efficiency` times as long as a read one
    (`write`: the cores' stores, interleaved over the banks as the simulator charges them;
    a one-tile block's single-bank write at the read rate is not told apart).

    All banks together serve at most their peak (`dram_grid_rate`); when the concurrent
    blocks fall on a share f of the banks (`BankSpread`), those banks serve at most f of
    it: tiles · B · concurrent / (peak · f). With the union `col_blocks · W`
    tiles wide (W = tiles / rows of one block), f = col_blocks · W / period below one, so
    the bound is rows · B · concurrent · period / (col_blocks · peak): linear in the
    block's rows. Over fewer than nb / period rows in all, f ≤ rows_all · cols_all / nb,
    which makes the bound a constant. One block that every concurrent core reads (a
    weight's chunk: its consecutive pages, every core's at once) puts ceil(T / nb) of
    its T pages on the busiest bank, each read by every core: that bank serves
    ceil(T / nb) · nb / T of the mean, e.g. 16 pages on Wormhole's 12 banks put two on 4
    of them (1.5x)."""
    size = t.tile_bytes * t.concurrent / (arch.dram.write_efficiency if write else 1.0)
    base = t.tiles * per_tile(size, dram_grid_rate(arch))
    spread = t.banks
    if spread is None:
        return base
    nb, peak = len(arch.dram.banks), dram_grid_rate(arch)
    bounds = [base]
    if spread.period > spread.col_blocks:
        bounds.append(spread.rows * per_tile(size * spread.period / spread.col_blocks, peak))
    blocks = spread.row_blocks * spread.col_blocks
    if blocks == 1:
        bounds.append(ceildiv(t.tiles, nb) * (nb * per_tile(size, peak)))
    elif blocks < nb:
        bounds.append(Const(per_tile(size * nb / blocks, peak)))
    return maximum(*bounds)


def dram_alone(arch: Arch, t: TransferSpec) -> Expr:
    """Cycles one core's block of transfer `t` takes with no other core at the banks: its
    engine's stream (`dram_read_tile`), or its pages spread over the banks, each bank
    serving its share of the grid rate, whichever is slower."""
    nb = len(arch.dram.banks)
    spread = ceildiv(t.tiles, nb) * per_tile(t.tile_bytes, dram_grid_rate(arch) / nb)
    return maximum(t.tiles * dram_read_tile(arch, t.tile_bytes), spread)


def link_bound(arch: Arch, transfers: tuple[TransferSpec, ...]) -> Expr:
    """Cycles the busiest NoC link needs for the stage's bytes.

    Each link's load is a sum over the transfers (tiles x tile bytes x the link's share);
    links whose shares are all at most another link's are dropped, so the maximum has one
    argument per non-dominated link."""
    return _busiest(arch, tuple(t.links for t in transfers), transfers, None)


def _busiest(
    arch: Arch,
    loads: tuple[LinkLoad, ...],
    transfers: tuple[TransferSpec, ...],
    only: LinkLoad | None,
) -> Expr:
    """`link_bound` over the links of `only` (all links when None)."""
    rate = arch.noc.link_effective_bytes_per_cycle
    kept = _dominant(loads, only)
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


def _dominant(loads: tuple[LinkLoad, ...], only: LinkLoad | None) -> tuple[tuple[float, ...], ...]:
    """Each link's shares of the transfers (of the links in `only`), the links whose
    shares are all at most another link's dropped.

    Cached by the identities of the link loads (`loom.arch.noc` caches them, so
    candidates with the same cores in use and copy patterns pass the same objects); the
    entry keeps them alive, so an identity is never reused while its entry lives."""
    key = (tuple(map(id, loads)), id(only))
    hit = _DOMINANT.get(key)
    if hit is not None and hit[0] == (loads, only):
        return hit[1]
    links = None if only is None else frozenset(link for link, _ in only)
    vectors: dict[Link, list[float]] = {}
    for i, load in enumerate(loads):
        for link, share in load:
            if links is None or link in links:
                vectors.setdefault(link, [0.0] * len(loads))[i] += share
    distinct = sorted({tuple(round(v, 6) for v in vec) for vec in vectors.values()}, reverse=True)
    kept: list[tuple[float, ...]] = []
    for vec in distinct:
        if not any(all(a >= b for a, b in zip(k, vec, strict=True)) for k in kept):
            kept.append(vec)
    if len(_DOMINANT) >= 4096:
        _DOMINANT.clear()
    _DOMINANT[key] = ((loads, only), tuple(kept))
    return tuple(kept)


_DOMINANT: dict[
    tuple[tuple[int, ...], int],
    tuple[tuple[tuple[LinkLoad, ...], LinkLoad | None], tuple[tuple[float, ...], ...]],
] = {}


def multicast_send(arch: Arch, tile_bytes: int, group: int) -> int:
    """Sender cycles per tile of one linked multicast to the other `group - 1` cores.

    The block goes out as one linked transaction in packets of `noc.max_packet_bytes`,
    each at the transfer-size bandwidth of a packet plus one write acknowledgement per
    receiver (`noc.multicast_ack_cycles_per_receiver`, fitted on the measured linked
    one-to-all tables: a full-grid multicast reaches the measured linked throughput, a
    small group is faster)."""
    noc = arch.noc
    packet = noc.max_packet_bytes
    wire = tile_bytes / noc.size_bandwidth(packet)
    acks = tile_bytes * noc.multicast_ack_cycles_per_receiver * max(group - 1, 0) / packet
    return math.ceil(wire + acks)


def multicast_handshake(arch: Arch, span: int, receivers: int = 2) -> int:
    """Latency of one send of a block beyond its bytes and its DRAM read (TT-Metal's
    semaphore protocol): the receivers signal ready (a semaphore write), then the data
    and the flag that releases them each land after a write's latency to the farthest
    receiver, `span` hops away: the one-hop semaphore write plus a router hop per further
    hop. A send to one receiver is a unicast write, whose barrier returns once the data
    has landed: one write latency, no flag. The receivers reserve their slot (and signal)
    no later than the sender reserves its own and starts reading the block from DRAM, so
    the ready signal lands during that read: only what exceeds the DRAM read latency
    shows (nothing on the chips described)."""
    write = arch.fixed.semaphore_cycles + max(span - 1, 0) * arch.noc.hop_cycles
    ready = max(arch.fixed.semaphore_cycles - arch.dram.read_latency_cycles, 0)
    return ready + (1 if receivers == 1 else 2) * write


def send_cycles(arch: Arch, tile_bytes: int, sends: tuple[SendSpec, ...]) -> int:
    """Sender cycles per tile of a block's sends, one after the other."""
    return sum(multicast_send(arch, tile_bytes, s.receivers + 1) for s in sends)


def send_latency(arch: Arch, sends: tuple[SendSpec, ...]) -> int:
    """Latency of a block's sends beyond their bytes: one handshake per send."""
    return sum(multicast_handshake(arch, s.span, s.receivers) for s in sends)


def dram_stream_tile(
    arch: Arch, tile_bytes: int, engine_bytes_per_cycle: float, issue_cycles: int
) -> int:
    """Cycles per tile of one engine streaming interleaved DRAM pages (one tile a page)
    at the measured per-engine rate `engine_bytes_per_cycle`.

    The stream runs at the slowest of three rates: the measured per-engine rate, the
    transfer-size bandwidth of one packet, and one transaction per `issue_cycles` (the
    NoC's `issue_cycles` for a read, `write_issue_cycles` for a write).
    They bound one another, they do not add: the measured rate is bytes over the whole
    batch's latency (ideal_performance.md, DRAM Interleaved Packet Sizes: 256 reads of
    2 KB in 23 929 cycles, 93.5 a page; 256 writes in 24 293, 94.9 a page), so the issue
    cost is already inside it, and the simulator caps the stream the same way."""
    noc = arch.noc
    packet = min(tile_bytes, noc.max_packet_bytes)
    return math.ceil(
        max(
            tile_bytes / engine_bytes_per_cycle,
            tile_bytes / noc.size_bandwidth(packet),
            issue_cycles,
        )
    )


def dram_read_tile(arch: Arch, tile_bytes: int) -> int:
    """Cycles per tile of one engine reading interleaved pages
    (`dram.reader_bytes_per_cycle`, `dram_stream_tile`)."""
    return dram_stream_tile(
        arch, tile_bytes, arch.dram.reader_bytes_per_cycle, arch.noc.issue_cycles
    )


def dram_write_tile(arch: Arch, tile_bytes: int) -> int:
    """Cycles per tile of one engine writing interleaved pages
    (`dram.writer_bytes_per_cycle`, `dram_stream_tile`): the measured DRAM write rate, not
    the core-to-core unicast rate plus an issue cost per tile (which made a 2 KB page 90
    cycles on Wormhole against the measured 94.9)."""
    return dram_stream_tile(
        arch, tile_bytes, arch.dram.writer_bytes_per_cycle, arch.noc.write_issue_cycles
    )


def read_phase(arch: Arch, t: TransferSpec, transfers: tuple[TransferSpec, ...]) -> Expr:
    """Cycles one engine spends on the DRAM read of transfer `t`: its own
    stream, or what the banks it hits (`dram_wide`) or the busiest link on its routes (the
    reads of the other engine, concurrent with it, loading those links too; the engine's
    own other reads come before or after it; a narrow block's routes are its own banks',
    `TransferSpec.narrow`) allow, whichever is slowest. Multicast senders of another
    engine's operand start their blocks with `t`'s (every group's handshake paces them),
    and a bank serves each stream fairly: `t`'s n_t streams against their n_u, it waits
    min(ω_t · n_u / n_t, ω_u) more than its own DRAM time ω_t. A unicast load's readers
    start when their own slots free and drift apart, so `t` slips between their bursts
    (no wait charged). A multicast sender sends only after its read has landed, so this
    phase and the send add up on the engine."""
    bounds = [t.tiles * dram_read_tile(arch, t.tile_bytes), dram_wide(arch, t)]
    if t.read_links:
        loads = tuple(u.read_links if u is t or u.engine != t.engine else () for u in transfers)
        bound = _busiest(arch, loads, transfers, t.read_links)
        rate = arch.noc.link_effective_bytes_per_cycle
        for width, share in reversed(t.narrow):  # its engine's NoC carries only its reads
            bound = select(width, t.tiles * per_tile(t.tile_bytes * share, rate), bound)
        bounds.append(bound)
    others = [u for u in transfers if t.multicast and u.multicast and u.engine != t.engine]
    if others:
        own = dram_wide(arch, t)
        waits = (
            minimum(ceildiv(own * u.concurrent, t.concurrent), dram_wide(arch, u)) for u in others
        )
        bounds.append(add(own, *waits))
    return maximum(*bounds)


def refill_cycles(
    arch: Arch,
    t: TransferSpec,
    transfers: tuple[TransferSpec, ...],
    writes: tuple[TransferSpec, ...] = (),
) -> Expr:
    """Cycles one engine takes to refetch transfer `t` while the other engines' loads of
    the stage stream at the same time: its read phase, or its DRAM time plus what each
    other engine's DRAM time steals from it, whichever is longer. Two streams sharing the
    banks fairly each get half: the shorter one (ω) ends after 2ω, the longer after the
    sum, so each other engine's reads add min(ω_t, D_e). `read_phase` already counts the
    links the other engines load; this adds the banks. With one engine it is the load's
    own time, as in `dram_read_stage`. `writes`: stores that start with the refetch
    (`write_wait`)."""
    own = dram_wide(arch, t)
    stolen: dict[str, Expr] = {}
    for u in transfers:
        if u.engine != t.engine:
            stolen[u.engine] = stolen.get(u.engine, Const(0)) + dram_wide(arch, u)
    cycles = read_phase(arch, t, transfers)
    waits = [minimum(own, d) for d in stolen.values()]
    if writes:
        waits.append(write_wait(arch, own, t.concurrent, writes))
    if waits:
        cycles = maximum(cycles, add(own, *waits))
    cycles, lat = _with_sends(arch, t, cycles)
    return cycles + lat


def write_wait(arch: Arch, own: Expr, streams: int, writes: tuple[TransferSpec, ...]) -> Expr:
    """Cycles reads of DRAM time `own` (ω_t, `dram_wide`) by `streams` cores (n_t) wait
    for stores that start with them, every core's at once: a bank gives each stream the
    same byte rate, and a written byte holds it 1 / `dram.write_efficiency` (e) times as
    long as a read one, so the reads lose ω_t · n_w / (n_t · e) to the n_w write streams,
    at most the writes' whole DRAM time ω_w (`dram_wide` with `write`). SwiGLU's `up`,
    refetched when the statement that reads it pops it, i.e. as `out`'s write of the same
    statement starts: 16 cores of Wormhole read 112 pages each in 15.7k cycles alone and
    37.1k beside the write (the simulator)."""
    written = add(*(dram_wide(arch, w, write=True) for w in writes))
    writers = sum(w.concurrent for w in writes)
    eff = Fraction(arch.dram.write_efficiency).limit_denominator(1000)
    share = ceildiv(own * (writers * eff.denominator), streams * eff.numerator)
    return minimum(written, share)


def send_time(arch: Arch, t: TransferSpec) -> Expr:
    """The sender's cycles for a multicast transfer's sends (0 for a unicast load)."""
    return t.tiles * send_cycles(arch, t.tile_bytes, t.sends) if t.multicast else Const(0)


def load_latency(arch: Arch, t: TransferSpec) -> int:
    """The latency the issuing engine waits for transfer `t`: the read's, and a
    multicast's handshakes."""
    if not t.multicast:
        return arch.dram.read_latency_cycles
    return arch.dram.read_latency_cycles + send_latency(arch, t.sends)


def _with_sends(arch: Arch, t: TransferSpec, read: Expr) -> tuple[Expr, int]:
    """The engine's cycles for transfer `t` after a read phase of `read` (a multicast
    sender sends once the read has landed) and the latency it waits."""
    return (read + send_time(arch, t) if t.multicast else read), load_latency(arch, t)


def dram_read_stage(
    arch: Arch, transfers: tuple[TransferSpec, ...]
) -> tuple[tuple[Term, ...], Expr]:
    """Terms and total cycles of a load stage issued back to back by one engine."""
    if not transfers:
        return (), Const(0)
    terms = []
    per_engine: dict[str, Expr] = {}
    waits: dict[str, int] = {}
    dram: Expr = Const(0)
    for t in transfers:
        cycles, lat = _with_sends(arch, t, read_phase(arch, t, transfers))
        kind = "multicast" if t.multicast else "dram_read"
        terms.append(Term(kind, f"{t.what} on the {t.engine}", cycles + lat))
        per_engine[t.engine] = per_engine.get(t.engine, Const(0)) + cycles
        waits[t.engine] = waits.get(t.engine, 0) + lat
        dram = dram + dram_wide(arch, t)
    links = link_bound(arch, transfers)
    if links != Const(0):
        terms.append(Term("noc_links", "busiest NoC link of the stage", links))
    return tuple(terms), max(waits.values()) + maximum(*per_engine.values(), dram, links)


def engine_read_stage(arch: Arch, transfers: tuple[TransferSpec, ...], engine: str) -> Expr:
    """Cycles `engine` is busy with its loads of a stage of `transfers`: its transfers'
    reads (each sharing the banks and links with the whole stage's, `read_phase`) and
    sends, after the read latency; 0 when it loads nothing there."""
    mine = [t for t in transfers if t.engine == engine]
    if not mine:
        return Const(0)
    cycles = [_with_sends(arch, t, read_phase(arch, t, transfers)) for t in mine]
    return max(lat for _, lat in cycles) + add(*(c for c, _ in cycles))


def dram_read_floor(arch: Arch, transfers: tuple[TransferSpec, ...]) -> Expr:
    """The least a load stage of these transfers costs, whatever their copy modes and
    group areas: the read latency, then each engine's own streams (`read_phase` is at
    least the stream; a multicast sender reads the whole block too). It depends only on
    the tiles, their bytes and the engines, so a bound built on it holds for every
    candidate that loads the same blocks on the same engines (`loom.solve.bounds`)."""
    if not transfers:
        return Const(0)
    per_engine: dict[str, Expr] = {}
    for t in transfers:
        stream = t.tiles * dram_read_tile(arch, t.tile_bytes)
        per_engine[t.engine] = per_engine.get(t.engine, Const(0)) + stream
    return arch.dram.read_latency_cycles + maximum(*per_engine.values())


def dram_write_stage(
    arch: Arch, transfers: tuple[TransferSpec, ...]
) -> tuple[tuple[Term, ...], Expr]:
    if not transfers:
        return (), Const(0)
    terms = []
    per_core: Expr = Const(0)
    dram: Expr = Const(0)
    for t in transfers:
        cycles = t.tiles * dram_write_tile(arch, t.tile_bytes)
        terms.append(Term("dram_write", t.what, cycles + arch.dram.write_latency_cycles))
        per_core = per_core + cycles
        dram = dram + dram_wide(arch, t, write=True)
    links = link_bound(arch, transfers)
    if links != Const(0):
        terms.append(Term("noc_links", "busiest NoC link of the stage", links))
    return tuple(terms), arch.dram.write_latency_cycles + maximum(per_core, dram, links)


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
