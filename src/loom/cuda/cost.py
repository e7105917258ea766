"""Analytic latency of a lowered launch: the model that ranks annotation sets.

It reads the checkpoints and the architecture only (never the simulator). Per output
tile, the three engines' busy times are estimated from the architecture's tables:

* DM lane: each blocking tile read costs the DRAM read latency plus the tile's bytes at
  the per-reader bandwidth; the writer adds one tile write per output tile;
* compute: tile-matmuls at `matmul.cycles(fidelity)`, element-wise ops from the
  element-wise table, unpack and pack of the block's tiles, the per-op overhead;
* overlap follows the pipe rule of the Loom paper's HEG: with double-buffered CBs the
  three stages overlap, max(l, m, s); with single buffers the load waits for the
  compute to pop its block, max(l + m, m + s).

A launch costs its constant preamble plus the busiest core's tiles, and never less than
the grid's DRAM traffic on each NoC at the all-cores DRAM bandwidth (measured on one
NoC: DM0 reads travel on NoC0, DM1's reads and the writes on NoC1). DRAM tensors are
interleaved one tile per page round-robin over the banks, so when every core fetches its
operands of one round at once, the bank holding the most of those pages serialises them
at its own bandwidth: a round is never shorter than that bank's pages (a column of tiles
of an array whose tile-row length is a multiple of the bank count lives in one bank).
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.cuda.consts import CONST
from loom.cuda.lower import LaunchProgram
from loom.cuda.physical import Physical
from loom.cuda.rows import wide_operands, widen
from loom.cuda.tileflow import FlowKernel, Operand, TileIndex, block_refs
from loom.cuda.tileplan import TILE
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    CExpr,
    FillExpr,
    MatmulExpr,
    ReadDram,
    UnaryExpr,
    walk_stmts,
)


@dataclass(frozen=True, slots=True)
class LaunchCost:
    cycles: float
    dm0: float
    compute: float
    dm1: float
    """Per output tile on the busiest core (uncut tiles)."""


def launch_cost(phys: Physical, lp: LaunchProgram, arch: Arch) -> LaunchCost:
    if phys.task.streaming == "row" and lp.shape[1] > lp.program.grid[1]:
        return _row_cost(phys, lp, arch)  # shard rows wider than one tile
    return _column_cost(phys, lp, arch)


def _column_cost(phys: Physical, lp: LaunchProgram, arch: Arch) -> LaunchCost:
    pk = phys.kernel(lp.kernel)
    flow, task = pk.task.flow, pk.task
    tb = arch.tile.bytes(phys.precision)
    read = arch.dram.read_latency_cycles + tb / arch.dram.reader_bytes_per_cycle
    write = arch.dram.write_latency_cycles + tb / arch.dram.writer_bytes_per_cycle
    comp = _compute(flow.expr, arch, tb)
    used = block_refs(flow.expr)
    lanes = dict(task.lanes)
    group = dict(lp.multicast)
    """Multicast deliveries: read from DRAM once per group of this many cores."""
    gy, gx = lp.program.grid
    per_core = -(-lp.shape[0] // gy) * -(-lp.shape[1] // gx)
    cut_core = min(per_core, lp.busiest_cut_tiles)
    if flow.contraction is not None:
        return _contraction_cost(phys, lp, arch)
    # a multicast delivery: the sender's read, the receivers' semaphores, the write
    mcast = read + 2 * arch.fixed.semaphore_cycles + tb / arch.noc.multicast_bytes_per_cycle
    mcast += (gy + gx) * arch.noc.hop_cycles
    dm = {"reader": 0.0, "writer": write}
    # sender-side halo conversion, on the busiest (corner) core: per pair of opposite
    # patches it converts and sends one (DM1, whose NoC runs north/west, so an east or
    # south patch goes round the torus), receives the other, and converts one DRAM halo;
    # where the grid does not divide the tile range (or is one core along the axis),
    # every core reads each halo tile from DRAM and converts it itself (the lowering)
    wrap = (arch.noc.grid_x + arch.noc.grid_y) / 2 * arch.noc.hop_cycles
    even = lp.shape[0] % gy == 0 and lp.shape[1] % gx == 0
    for hc in flow.conversions:
        comp += arch.matmul.cycles("HiFi4") + arch.compute.unpack_cycles(tb)
        if not even or (gx if hc.axis == "x" else gy) < 2:
            dm[lanes[hc.halo]] += read
            continue
        send = arch.fixed.semaphore_cycles + wrap + tb / arch.noc.link_effective_bytes_per_cycle
        dm["writer"] += send / 2
        dm["reader"] += (read + arch.fixed.semaphore_cycles) / 2
    # a delivery held per tile-row trip (a fused launch's factor column) is paid by the
    # first column pass of each trip, not by every tile
    held_row = set(lp.row_held)
    trip = {"reader": 0.0, "writer": 0.0}
    for o in flow.operands:
        if o.name in used:
            (trip if o.name in held_row else dm)[lanes[o.name]] += (
                mcast if o.name in group else read
            )
    for name, _ in flow.sunk:  # masked selectors delivered per tile instead of held
        dm["reader"] += mcast if name in group else read
    masked = 2 * read
    mask_comp = (
        3 * arch.compute.eltwise("mul")
        + arch.compute.eltwise("add")
        + 3 * arch.compute.unpack_cycles(tb)
    )
    comp_plain = 0.0 if flow.dm_copy else comp
    share = _later_share(lp)
    bank_pass = _bank_round(phys, lp, flow, arch, skip=held_row) * share
    bank_trip = _bank_round(phys, lp, flow, arch) * share

    def steps(extra: dict[str, float], bank: float) -> tuple[float, float]:
        """(unmasked, masked) steady step with `extra` lane time added."""
        rd, wr = dm["reader"] + extra["reader"], dm["writer"] + extra["writer"]
        plain = max(rd, wr) if flow.dm_copy else _overlap(rd, comp, wr, phys.depth)
        old_read = 0 if flow.old in used else read
        cut = _overlap(rd + masked + old_read, comp + mask_comp, wr, phys.depth)
        return max(plain, bank), max(cut, bank)

    plain, cut = steps({"reader": 0.0, "writer": 0.0}, bank_pass)
    plain_trip, cut_trip = steps(trip, bank_trip)
    # the first tile: every core leaves the preamble at once and issues the same reads in
    # the same order, each waited for before the next, so each read waits for its
    # hottest bank (later tiles drift apart and share the banks as one pool, `bank`,
    # among the cores that still have a tile)
    cut_first = cut_core > 0
    first_reads = _first_round(
        phys,
        lp,
        flow,
        arch,
        {
            "reader": read,
            "writer": read,
            **{o.name: (mcast if o.name in group else read) for o in flow.operands},
        },
    )
    first = _first_step(
        flow,
        phys,
        first_reads,
        dm["writer"] + trip["writer"],
        (comp, plain_trip),
        (mask_comp, cut_trip),
        cut_first,
    )
    # every core fetches the same constant page at once: its bank serves every core's
    # copy in turn after the read latency, unless one core reads it and multicasts it
    camp = arch.dram.read_latency_cycles + gy * gx * tb / _bank_rate(arch)
    if "const" in group:  # per send: receivers' semaphores, the write, its flag
        sends = (gy > 1) + (gx > 1)
        send = 2 * arch.fixed.semaphore_cycles + tb / arch.noc.multicast_bytes_per_cycle
        camp = read + sends * (send + (gy + gx) * arch.noc.hop_cycles)
    held = len(flow.consts) - len(flow.sunk)  # a sunk guard's selectors come per tile
    if lp.const_senders:  # the sending cores multicast their constants in parallel
        held = max(lp.const_senders)
    preamble = held * max(read, camp)
    if flow.hoisted:  # invariant operands delivered once, the values computed once
        preamble += max(read, camp) + sum(_compute(e, arch, tb) for _, e in flow.hoisted)
    cyc = preamble + first + _later_steps(lp, cut_core, (plain_trip, cut_trip), (plain, cut))
    noc: dict[str, float] = {"reader": 2 * lp.cut_tiles * tb, "writer": lp.tiles * tb}
    for o in flow.operands:
        if o.name in used:
            noc[lanes[o.name]] += _delivered_tiles(lp, o.name, group) * tb
    return LaunchCost(
        max(cyc, max(noc.values()) / arch.dram.all_cores_bytes_per_cycle),
        dm["reader"],
        comp_plain,
        dm["writer"],
    )


def _later_steps(
    lp: LaunchProgram, cut_core: int, trip: tuple[float, float], rest: tuple[float, float]
) -> float:
    """The busiest core's tiles after its first: one tile-row trip per tile row it owns,
    the first column pass of each costing `trip` (it carries the trip's held
    deliveries; the first tile is such a pass), the others `rest`, each as (unmasked,
    masked) step; `cut_core` of the core's tiles are masked, `lp.busiest_cut_first`
    of them in first passes."""
    gy, gx = lp.program.grid
    trips = -(-lp.shape[0] // gy)
    per_core = trips * -(-lp.shape[1] // gx)
    cut_trips = min(trips, lp.busiest_cut_first, cut_core)
    cut_passes = max(0, min(per_core - trips, cut_core - cut_trips))
    if cut_core > 0:  # the first tile is taken as masked (see _first_step)
        if cut_trips:
            cut_trips -= 1
        else:
            cut_passes = max(0, cut_passes - 1)
    return (
        (trips - 1 - cut_trips) * trip[0]
        + cut_trips * trip[1]
        + (per_core - trips - cut_passes) * rest[0]
        + cut_passes * rest[1]
    )


def _delivered_tiles(lp: LaunchProgram, name: str, group: dict[str, int]) -> float:
    """Tiles of delivery `name` read from DRAM by the launch: one per tile row when it is
    held per tile-row trip (read by the row's owner), else one per tile per group."""
    if name in lp.row_held:
        return float(lp.shape[0])
    return lp.tiles / group.get(name, 1)


def _contraction_cost(phys: Physical, lp: LaunchProgram, arch: Arch) -> LaunchCost:
    """A reduction launch: per reduction block, the panel deliveries against the blocked
    matmul; per output tile (or core block, interchanged) the accumulator's tail."""
    flow = phys.kernel(lp.kernel).task.flow
    assert flow.contraction is not None
    tb = arch.tile.bytes(phys.precision)
    read = arch.dram.read_latency_cycles + tb / arch.dram.reader_bytes_per_cycle
    write = arch.dram.write_latency_cycles + tb / arch.dram.writer_bytes_per_cycle
    comp = _compute(flow.expr, arch, tb)
    lanes = dict(phys.kernel(lp.kernel).task.lanes)
    group = dict(lp.multicast)
    gy, gx = lp.program.grid
    per_core = -(-lp.shape[0] // gy) * -(-lp.shape[1] // gx)
    cn = flow.contraction
    strip = cn.lhs.rows * cn.lhs.cols
    blocked = flow.tile.reduction is not None and flow.tile.reduction.interchange
    by, bx = (lp.shape[0] // gy, lp.shape[1] // gx) if blocked else (1, 1)
    blk = {cn.lhs.name: by * strip, cn.rhs.name: bx * strip}
    dm = {"reader": 0.0, "writer": 0.0}
    for n, tiles in blk.items():
        bw = arch.dram.reader_bytes_per_cycle
        dm[lanes[n]] += arch.dram.read_latency_cycles + tiles * tb / bw
    mm = by * bx * strip * arch.matmul.cycles("HiFi4")
    mm += (by + bx) * strip * arch.compute.unpack_cycles(tb)
    mm += arch.compute.op_overhead_cycles + by * bx * arch.compute.pack_cycles(tb)
    load, math, store = dm["reader"], mm, dm["writer"]
    bank = _bank_round(phys, lp, flow, arch) * (by + bx) / 2
    inner = max(_overlap(load, math, store, phys.depth), bank)
    tiles = by * bx
    tail = tiles * (read - arch.dram.read_latency_cycles) + read + tiles * comp + write
    per_tile = cn.blocks * inner + tail
    per_op = lp.tiles * cn.blocks * strip * tb / (by if blocked else 1)
    noc: dict[str, float] = {"reader": lp.tiles * tb, "writer": lp.tiles * tb}
    for n in blk:
        noc[lanes[n]] += per_op / group.get(n, 1)
    cyc = (per_core if not blocked else 1) * per_tile
    floor = max(noc.values()) / arch.dram.all_cores_bytes_per_cycle
    return LaunchCost(max(cyc, floor), load, math, store)


def _later_share(lp: LaunchProgram) -> float:
    """The mean share of the grid's cores that run a tile-loop trip after the first:
    a core takes every grid-th tile row and column, so on an uneven grid the last trips
    of the busiest core run on fewer cores, which load the banks less."""
    gy, gx = lp.program.grid
    per_core = -(-lp.shape[0] // gy) * -(-lp.shape[1] // gx)
    if per_core <= 1:
        return 1.0
    return (lp.shape[0] * lp.shape[1] - gy * gx) / (gy * gx * (per_core - 1))


def barrier_cycles(arch: Arch, grid: tuple[int, int]) -> float:
    """A grid barrier before a launch: every core's semaphore increment reaches the
    coordinator (one semaphore latency plus the grid's span in hops), the coordinator
    applies them one per NIU turn, then multicasts the release (another semaphore)."""
    gy, gx = grid
    if gy * gx <= 1:
        return 0.0
    span = (gy + gx - 2) * arch.noc.hop_cycles
    return 2 * (arch.fixed.semaphore_cycles + span) + (gy * gx - 1) * arch.noc.niu_cycles


def _bank_round(
    phys: Physical,
    lp: LaunchProgram,
    flow: FlowKernel,
    arch: Arch,
    width: int = 1,
    serial: bool = False,
    skip: set[str] | None = None,
) -> float:
    """Cycles the hottest DRAM bank needs for one round of reads by every core (the
    first tile of each core, first reduction block; the first shard row with row
    streaming, whose wide operands span `width` tiles). The selectors a sunk guard
    delivers per tile count with the operands (their pages in the constant table).
    With `serial`, every core issues the round's reads in the same order, each waited
    for before the next, so the round is the sum over its reads of each read's hottest
    bank (rather than the hottest bank of all of them together). Reads named in `skip`
    (held per tile-row trip, absent from the other column passes) are left out."""
    counts = _round_pages(phys, lp, flow, arch, width, serial)
    counts = {k: v for k, v in counts.items() if k not in (skip or set())}
    if not counts:
        return 0.0
    banks = len(arch.dram.banks)
    if serial:
        hot = sum(max(v) for v in counts.values())
    else:
        hot = max(sum(v[b] for v in counts.values()) for b in range(banks))
    return hot * arch.tile.bytes(phys.precision) / _bank_rate(arch)


def _first_round(
    phys: Physical,
    lp: LaunchProgram,
    flow: FlowKernel,
    arch: Arch,
    cost: dict[str, float],
    width: int = 1,
) -> float:
    """The busiest lane's reads of the first tile (shard row of `width` tiles), when
    every core issues them at once in the same order, each waited for before the next:
    a read takes its own time (`cost`, by name, else `cost["reader"]`; masks and
    selectors ride the reader) or, if longer, the read latency plus the time its
    hottest bank needs for every core's pages of it."""
    tb = arch.tile.bytes(phys.precision)
    lanes = dict(phys.kernel(lp.kernel).task.lanes)
    busy = {"reader": 0.0, "writer": 0.0}
    rounds = _round_pages(phys, lp, flow, arch, width, serial=True, old=True)
    for name, pages in rounds.items():
        lane = lanes.get(name, "reader")
        queued = arch.dram.read_latency_cycles + max(pages) * tb / _bank_rate(arch)
        busy[lane] += max(cost.get(name, cost["reader"]), queued)
    return max(busy.values())


def _bank_rate(arch: Arch) -> float:
    """Bytes per cycle one DRAM bank serves: its peak at the achievable efficiency."""
    return arch.dram.bank_bytes_per_cycle * arch.dram.efficiency


def _round_pages(  # noqa: C901 - one count per kind of read
    phys: Physical,
    lp: LaunchProgram,
    flow: FlowKernel,
    arch: Arch,
    width: int = 1,
    serial: bool = False,
    old: bool = False,
) -> dict[str, list[int]]:
    """Pages per bank, by read, of one round of reads by every core (`_bank_round`);
    with `old`, the cut tiles' read of the target's current tile counts too."""
    plan = phys.task.flow.plan
    banks = len(arch.dram.banks)
    counts: dict[str, list[int]] = {}
    gy, gx = lp.program.grid
    env = dict(lp.env)
    reg = flow.tile.region.at(env)
    tr0, tc0 = reg[0] // TILE, reg[2] // TILE
    ops: list[Operand] = [o for o in flow.operands if o.name in block_refs(flow.expr)]
    if flow.contraction is not None:
        ops = [flow.contraction.lhs, flow.contraction.rhs]
    r0, r1, c0, c1 = reg
    tr1, tc1 = (r1 - 1) // TILE, (c1 - 1) // TILE
    masked = flow.contraction is None and lp.cut_tiles > 0  # a sunk guard has no masks
    group = dict(lp.multicast)
    selectors = _selector_reads(lp, [n for n, _ in flow.sunk]) if serial else []

    def add(key: str, page: int) -> None:
        counts.setdefault(key, [0] * banks)[page % banks] += 1

    for y in range(gy):
        for x in range(gx):
            own = {"r": tr0 + y, "c": tc0 + x * width, "k": 0}
            r, c = own["r"], own["c"]
            cut_r = (r == tr0 and r0 % TILE) or (r == tr1 and r1 % TILE)
            cut_c = (c == tc0 and c0 % TILE) or (c == tc1 and c1 % TILE)
            if masked and (plan.predicates == "all" or cut_r or cut_c):
                kind = 3 * (0 if r == tr0 else 1 if r == tr1 else 2)
                kind += 0 if c == tc0 else 1 if c == tc1 else 2
                for dc in range(width):  # row streaming: per-column mask tables
                    add("mask", len(flow.consts) + kind * width + dc)
                    add("nmask", len(flow.consts) + (9 + kind) * width + dc)
                    if old and flow.old not in block_refs(flow.expr):
                        prev = next(o for o in flow.operands if o.name == flow.old)
                        add(prev.name, r * plan.array(prev.array).cols // TILE + c + dc)
            for o in ops:
                if o.name in group and _receiver(o, y, x):
                    continue  # a multicast group's sender reads its pages once
                cols = plan.array(o.array).cols // TILE
                rows_ = plan.array(o.array).rows // TILE
                row = _tile(o.row, own, env, rows_)
                col = _tile(o.col, own, env, cols)
                span = width if o.col.base == "c" else 1
                for dr in range(o.rows):
                    for dc in range(o.cols * span):
                        add(o.name, (row + dr) * cols + col + dc)
            at = {"core_y": y, "core_x": x, "wy": 0, "wx": 0, **env}
            for name, read in selectors:
                if name in group and (y, x) != (0, 0):
                    continue
                for dc in range(read.cols):
                    add(name, read.col.eval(at) + dc)
    return counts


def _selector_reads(lp: LaunchProgram, names: list[str]) -> list[tuple[str, ReadDram]]:
    """The per-tile reads of a sunk guard's selectors from the constant table."""
    out: list[tuple[str, ReadDram]] = []
    for s in walk_stmts(lp.program.reader):
        new = isinstance(s, ReadDram) and s.buffer in names and s.buffer not in dict(out)
        if new and isinstance(s, ReadDram) and s.tensor == CONST:
            out.append((s.buffer, s))
    return out


def _receiver(o: Operand, y: int, x: int) -> bool:
    """Not the core that reads a multicast delivery of `o` for its group."""
    bases = (o.row.base, o.col.base)
    return ("r" not in bases and y > 0) or ("c" not in bases and x > 0)


def _tile(t: TileIndex, own: dict[str, int], env: dict[str, int], limit: int) -> int:
    if t.base is None:
        assert t.elem is not None
        return t.elem.eval(env) // TILE
    return max(0, min(limit - 1, own[t.base] + t.delta))


def _first_step(
    flow: FlowKernel,
    phys: Physical,
    reads: float,
    store: float,
    plain: tuple[float, float],
    cut: tuple[float, float],
    is_cut: bool,
) -> float:
    """The first tile or shard row: its reads (each waiting on its hottest bank) overlapped
    with its compute and store, never faster than a steady step of the same kind. `plain`
    is (compute, steady step) of an unmasked step; `cut` is (extra mask compute, steady
    step) of a masked one, taken when `is_cut`."""
    comp = plain[0] + (cut[0] if is_cut else 0.0)
    steady = cut[1] if is_cut else plain[1]
    first = max(reads, store) if flow.dm_copy else _overlap(reads, comp, store, phys.depth)
    return max(first, steady)


def _overlap(load: float, math: float, store: float, depth: int) -> float:
    return max(load, math, store) if depth == 2 else max(load + math, math + store)


def _compute(e: CExpr, arch: Arch, tb: int) -> float:
    """One Compute statement on 1x1 blocks: overhead + ops + unpack of L1 operands + pack."""

    def walk(x: CExpr) -> float:
        match x:
            case BlockRef():
                return float(arch.compute.unpack_cycles(tb))
            case FillExpr():
                return float(arch.compute.eltwise("copy"))
            case MatmulExpr(lhs=a, rhs=b):
                return walk(a) + walk(b) + arch.matmul.cycles("HiFi4")
            case BinaryExpr(op=op, lhs=a, rhs=b):
                return walk(a) + walk(b) + arch.compute.eltwise(op)
            case UnaryExpr(op=op, operand=a):
                return walk(a) + arch.compute.eltwise(op)
        return 0.0

    return arch.compute.op_overhead_cycles + walk(e) + arch.compute.pack_cycles(tb)


def _row_cost(phys: Physical, lp: LaunchProgram, arch: Arch) -> LaunchCost:
    """task.streaming=row: per shard row of W tiles, one synchronisation per buffer.
    Each wide delivery pays one DRAM latency for W tiles, compute works on 1xW blocks
    (narrow @ wide matmuls are W tile-matmuls, one op overhead per row), the row is
    written as one block; the stages overlap by the same rule as per tile, but at row
    granularity, so the slower stage of a whole row sets the time (the seed's reading)."""
    pk = phys.kernel(lp.kernel)
    flow, task = pk.task.flow, pk.task
    tb = arch.tile.bytes(phys.precision)
    gy, gx = lp.program.grid
    w = lp.shape[1] // gx
    wide = wide_operands(flow)
    lat, rbw = arch.dram.read_latency_cycles, arch.dram.reader_bytes_per_cycle
    wlat, wbw = arch.dram.write_latency_cycles, arch.dram.writer_bytes_per_cycle

    def read(n: int) -> float:
        return lat + n * tb / rbw

    group = dict(lp.multicast)
    lanes = dict(task.lanes)
    form = widen(flow, flow.expr)
    expr = form.expr
    used = block_refs(expr)
    dm = {"reader": 0.0, "writer": wlat + w * tb / wbw}
    for o in flow.operands:
        if o.name in used:
            n = w if o.name in wide else 1
            cost = read(n)
            if o.name in group:
                cost += (
                    2 * arch.fixed.semaphore_cycles + n * tb / arch.noc.multicast_bytes_per_cycle
                )
                cost += (gy + gx) * arch.noc.hop_cycles
            dm[lanes[o.name]] += cost
    for _, axis in flow.sunk:
        dm["reader"] += read(w if axis == "col" else 1)
    shapes = {n: (1, w) for n in wide | {n for n, a in flow.sunk if a == "col"}}
    shapes |= {n: s for n in used if (s := form.operator_shape(n, w)) is not None}
    comp = _compute_row(expr, arch, tb, shapes)
    masks = 2 * read(w)
    mask_comp = w * (
        3 * arch.compute.eltwise("mul")
        + arch.compute.eltwise("add")
        + 3 * arch.compute.unpack_cycles(tb)
    )
    old_read = 0.0 if flow.old in used else read(w)
    bank = _bank_round(phys, lp, flow, arch, w, serial=True)
    if flow.dm_copy:
        plain = max(dm["reader"], dm["writer"], bank)
    else:
        plain = max(_overlap(dm["reader"], comp, dm["writer"], phys.depth), bank)
    cut = _overlap(dm["reader"] + masks + old_read, comp + mask_comp, dm["writer"], phys.depth)
    cut = max(cut, bank)
    rows = -(-lp.shape[0] // gy)
    cut_rows = lp.busiest_cut_rows
    # the first shard row: every core issues its reads at once (see _first_round)
    own = {"reader": read(1), "mask": read(w), "nmask": read(w), flow.old: read(w)}
    own |= {o.name: read(w if o.name in wide else 1) for o in flow.operands if o.name in used}
    first_reads = _first_round(phys, lp, flow, arch, own, w)
    cut_first = cut_rows > 0
    first = _first_step(
        flow, phys, first_reads, dm["writer"], (comp, plain), (mask_comp, cut), cut_first
    )
    frames = {k.name for k in flow.consts} - {n for n, _ in flow.sunk}
    sunk = {n for n, _ in flow.sunk}  # delivered per row, not held
    held = [c for c in sorted(used - sunk) if c in frames or form.operator_shape(c, w)]
    preamble = sum(_held_read(lp, arch, tb, c, "const" in group) for c in held)
    later_cut = cut_rows - cut_first
    cyc = preamble + first + (rows - 1 - later_cut) * plain + later_cut * cut
    noc: dict[str, float] = {"reader": 2 * lp.cut_tiles * tb, "writer": lp.tiles * tb}
    for o in flow.operands:
        if o.name in used:
            noc[lanes[o.name]] += _delivered_tiles(lp, o.name, group) * tb
    floor = max(noc.values()) / arch.dram.all_cores_bytes_per_cycle
    return LaunchCost(max(cyc, floor), dm["reader"] / w, comp / w, dm["writer"] / w)


def _held_read(lp: LaunchProgram, arch: Arch, tb: int, name: str, multicast: bool) -> float:
    """A held constant block of n tiles, read before the tile loop: by one core and
    multicast (the read, then per send the receivers' semaphores, the write and the hops),
    or by every core at once, when the bank holding the most of its pages serves every
    core's copy of them in turn (as in the column cost's preamble)."""
    gy, gx = lp.program.grid
    rows, cols, col = 1, 1, 0
    for s in walk_stmts(lp.program.reader):
        if isinstance(s, ReadDram) and s.buffer == name and s.tensor == CONST:
            rows, cols, col = s.rows, s.cols, int(s.col.eval({}))
            break
    n = rows * cols
    read = arch.dram.read_latency_cycles + n * tb / arch.dram.reader_bytes_per_cycle
    if multicast:
        sends = (gy > 1) + (gx > 1)
        send = 2 * arch.fixed.semaphore_cycles + n * tb / arch.noc.multicast_bytes_per_cycle
        return read + sends * (send + (gy + gx) * arch.noc.hop_cycles)
    banks = len(arch.dram.banks)
    counts = [0] * banks
    for r in range(rows):
        for c in range(cols):
            counts[(r * len(lp.consts) + col + c) % banks] += 1
    queued = arch.dram.read_latency_cycles + gy * gx * max(counts) * tb / _bank_rate(arch)
    return max(read, queued)


def _compute_row(e: CExpr, arch: Arch, tb: int, shapes: dict[str, tuple[int, int]]) -> float:
    """One Compute statement on 1xW blocks: an element-wise op on a 1xW value costs W
    tile ops, a block matmul (a x k) @ (k x b) a*k*b tile matmuls (a band operator's
    1xW @ WxW is W^2)."""

    def walk(x: CExpr) -> tuple[float, tuple[int, int]]:
        match x:
            case BlockRef(buffer=b):
                s = shapes.get(b, (1, 1))
                return s[0] * s[1] * float(arch.compute.unpack_cycles(tb)), s
            case FillExpr():
                return float(arch.compute.eltwise("copy")), (1, 1)
            case MatmulExpr(lhs=a, rhs=b):
                (ca, sa), (cb, sb) = walk(a), walk(b)
                return ca + cb + sa[0] * sa[1] * sb[1] * arch.matmul.cycles("HiFi4"), (sa[0], sb[1])
            case BinaryExpr(op=op, lhs=a, rhs=b):
                (ca, sa), (cb, sb) = walk(a), walk(b)
                s = (max(sa[0], sb[0]), max(sa[1], sb[1]))
                return ca + cb + s[0] * s[1] * arch.compute.eltwise(op), s
            case UnaryExpr(op=op, operand=a):
                ca, sa = walk(a)
                return ca + sa[0] * sa[1] * arch.compute.eltwise(op), sa
        return 0.0, (1, 1)

    cyc, s = walk(e)
    return arch.compute.op_overhead_cycles + cyc + s[0] * s[1] * arch.compute.pack_cycles(tb)
