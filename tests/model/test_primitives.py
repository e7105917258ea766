"""Transfer terms of the latency model: DRAM bank spread, the read phase of a multicast
sender, and which concurrent reads load a transfer's links."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from loom.arch import Arch, load_arch
from loom.arch import noc as nocmap
from loom.model import primitives as prim
from loom.sim.params import from_arch
from loom.symbolic import Const, Sym

BH = load_arch("blackhole_p150_13x10")


def peak(arch: Arch) -> float:
    return arch.dram.peak_bytes_per_cycle * arch.dram.efficiency


def transfer(**kw: Any) -> prim.TransferSpec:
    return replace(prim.TransferSpec("load a", 2048, Const(12), 24), **kw)


def test_blocks_on_a_few_banks_are_served_by_those_banks_only() -> None:
    # 24 cores read 3x4-tile blocks of the same 4 columns of a tensor 8 tiles wide: the
    # pages of a column all sit in one of the 8 banks, so 4 banks serve every byte.
    narrow = prim.BankSpread(rows=Const(3), period=8, col_blocks=1, row_blocks=24)
    cycles = prim.dram_wide(BH, transfer(banks=narrow)).eval({})
    assert cycles == 3 * math.ceil(2048 * 24 * 8 / peak(BH))
    assert cycles > 1.9 * 12 * 2048 * 24 / peak(BH)
    # Column blocks of 8 cores side by side cover every bank: all banks serve them.
    wide = prim.BankSpread(rows=Const(3), period=8, col_blocks=8, row_blocks=24)
    even = prim.dram_wide(BH, transfer(banks=wide)).eval({})
    assert even == prim.dram_wide(BH, transfer()).eval({})
    assert even == 12 * math.ceil(2048 * 24 / prim.dram_grid_rate(BH))


def test_a_block_every_core_reads_loads_its_busiest_bank_more() -> None:
    # RMSNorm's weight chunk of 16 tiles, read by every one of 16 Wormhole cores (one
    # block, 12 banks): two of its pages sit on 4 banks, which serve 2 · 16 reads of
    # 2 KB while the mean bank serves 16 · 16 / 12 (the simulator: those 4 banks busy,
    # the others at 75%, for the read's 3 330 cycles).
    wh = load_arch("wormhole_n150")
    one = prim.BankSpread(rows=Const(1), period=4, col_blocks=1, row_blocks=1)
    t = prim.TransferSpec("load w", 2048, Const(16), 16, banks=one)
    page = math.ceil(2048 * 16 / prim.dram_grid_rate(wh))
    assert prim.dram_wide(wh, replace(t, banks=None)).eval({}) == 16 * page
    assert prim.dram_wide(wh, t).eval({}) == 2 * 12 * page
    # 24 pages fill every bank twice; 3 pages a bank for 32 of them (32 / 12 = 2.67)
    assert prim.dram_wide(wh, replace(t, tiles=Const(24))).eval({}) == 24 * page
    assert prim.dram_wide(wh, replace(t, tiles=Const(32))).eval({}) == 3 * 12 * page
    # blocks of different cores spread their pages over the banks: the mean
    rows = prim.BankSpread(rows=Const(1), period=4, col_blocks=1, row_blocks=16)
    assert prim.dram_wide(wh, replace(t, banks=rows)) == prim.dram_wide(wh, replace(t, banks=None))


def test_a_width_coprime_with_the_banks_spreads_every_block() -> None:
    spread = prim.BankSpread(rows=Const(3), period=1, col_blocks=1, row_blocks=24)
    assert prim.dram_wide(BH, transfer(banks=spread)) == prim.dram_wide(BH, transfer())


def test_an_engines_dram_read_runs_at_the_measured_rate_with_its_issue_cost_inside() -> None:
    # ideal_performance.md, DRAM Interleaved Packet Sizes on Wormhole: 256 reads of 2 KB
    # pages in 23 929 cycles (latency included), 93.5 cycles a page: the measured
    # 22 B/cycle already pays the issue cost, which bounds a stream, never adds to it
    wh = load_arch("wormhole_n150")
    assert prim.dram_read_tile(wh, 2048) == math.ceil(2048 / wh.dram.reader_bytes_per_cycle)
    modeled = 256 * prim.dram_read_tile(wh, 2048) + wh.dram.read_latency_cycles
    assert abs(modeled / 23929 - 1) < 0.03  # the issue cost added per page: +22%
    # the simulator caps one engine's interleaved read at the same rate
    for arch in (wh, BH):
        p = from_arch(arch)
        for size in (64, 512, 1088, 2048, 4096):
            rate = min(p.unicast_cap(size), p.dram_reader_bytes_per_cycle)
            assert prim.dram_read_tile(arch, size) == math.ceil(size / rate - 1e-9)


def test_an_engines_dram_write_runs_at_the_measured_write_rate() -> None:
    # ideal_performance.md, DRAM Interleaved Packet Sizes on Wormhole, Sender: 256 writes
    # of 512 B ... 8 KB pages (cycles, latency included). The measured 21 B/cycle and the
    # transfer-size rate bound the stream: median |error| 5%; the unicast rate plus an
    # issue cost per page: 17% (37 cycles a 512 B page against 23, 4 KB and 8 KB 13-19%
    # fast)
    wh = load_arch("wormhole_n150")
    assert prim.dram_write_tile(wh, 2048) == math.ceil(2048 / wh.dram.writer_bytes_per_cycle)
    measured = {512: 6392, 1024: 12435, 2048: 24293, 4096: 47971, 8192: 95521}
    lat = wh.dram.write_latency_cycles
    new, old = [], []
    for size, cycles in measured.items():
        new.append(abs((256 * prim.dram_write_tile(wh, size) + lat) / cycles - 1))
        per = math.ceil(size / wh.noc.unicast_bytes_per_cycle) + wh.noc.issue_cycles
        old.append(abs((256 * per + lat) / cycles - 1))
    assert sorted(new)[2] < 0.06 < 0.15 < sorted(old)[2]
    # the simulator caps one engine's interleaved write at the same rate
    for arch in (wh, BH):
        p = from_arch(arch)
        for size in (64, 512, 1088, 2048, 4096):
            rate = min(p.unicast_cap(size, write=True), p.dram_writer_bytes_per_cycle)
            assert prim.dram_write_tile(arch, size) == math.ceil(size / rate - 1e-9)
    # a store stage: the write latency plus the pages at that rate
    t = prim.TransferSpec("store o", 2048, Const(8), 1)
    _, cycles = prim.dram_write_stage(wh, (t,))
    assert cycles.eval({}) == wh.dram.write_latency_cycles + 8 * prim.dram_write_tile(wh, 2048)


def test_the_cores_stores_hold_the_banks_longer_than_their_reads() -> None:
    # the simulator charges an interleaved written byte 1 / dram.write_efficiency of a
    # read's bank time (Wormhole 0.6: all cores writing take ~1.4x their reads); the
    # model's DRAM-wide term of a store asks the same field, and Blackhole (1.0) is as a read
    wh = load_arch("wormhole_n150")
    t = prim.TransferSpec("store o", 2048, Const(64), 64)
    read, write = prim.dram_wide(wh, t).eval({}), prim.dram_wide(wh, t, write=True).eval({})
    rate = prim.dram_grid_rate(wh)
    assert read == 64 * math.ceil(2048 * 64 / rate)
    assert write == 64 * math.ceil(2048 * 64 / wh.dram.write_efficiency / rate) > read
    assert prim.dram_wide(BH, t, write=True).eval({}) == prim.dram_wide(BH, t).eval({})
    _, stage = prim.dram_write_stage(wh, (t,))
    assert stage.eval({}) >= wh.dram.write_latency_cycles + write


def test_a_read_beside_writes_that_start_with_it_waits_at_equal_byte_rates() -> None:
    # 16 cores read 112 pages each while each writes 112: a bank gives every stream the
    # same byte rate and a written byte holds it 1 / 0.6 as long on Wormhole, so the
    # read ends with the write, after both DRAM times (the simulator: SwiGLU's `up`
    # 15.7k cycles alone, 37.1k beside `out`'s write); a write of a quarter of the pages
    # ends first and the read waits its whole DRAM time; Blackhole's writes cost a read's
    wh = load_arch("wormhole_n150")
    read = prim.TransferSpec("load up", 2048, Const(112), 16)
    own = prim.dram_wide(wh, read)
    write = prim.TransferSpec("store out", 2048, Const(112), 16)
    omega_w = prim.dram_wide(wh, write, write=True).eval({})
    wait = prim.write_wait(wh, own, 16, (write,)).eval({})
    assert wait == omega_w > own.eval({})
    short = prim.TransferSpec("store out", 2048, Const(28), 16)
    assert prim.write_wait(wh, own, 16, (short,)).eval({}) == prim.dram_wide(
        wh, short, write=True
    ).eval({})
    long = prim.TransferSpec("store out", 2048, Const(448), 16)
    assert prim.write_wait(wh, own, 16, (long,)).eval({}) == math.ceil(own.eval({}) / 0.6)
    assert prim.write_wait(BH, prim.dram_wide(BH, read), 16, (long,)).eval({}) == (
        prim.dram_wide(BH, read).eval({})
    )
    # refetching beside the write: at least both DRAM times, never less than alone
    alone = prim.refill_cycles(wh, read, (read,)).eval({})
    beside = prim.refill_cycles(wh, read, (read,), (write,)).eval({})
    assert beside == alone + omega_w


def test_each_blocking_read_of_an_engine_waits_its_own_latency() -> None:
    # K then V on the reader: two blocking copies, two barriers, one after the other;
    # a load on the other engine waits in parallel
    k = transfer(concurrent=1)
    v = transfer(what="load v", concurrent=1)
    w = transfer(what="load w", concurrent=1, engine="writer")
    read = 12 * prim.dram_read_tile(BH, 2048)
    lat = BH.dram.read_latency_cycles
    assert prim.dram_read_stage(BH, (k, v))[1].eval({}) == 2 * lat + 2 * read
    assert prim.dram_read_stage(BH, (k, w))[1].eval({}) == lat + read


def test_a_multicast_sender_reads_then_sends() -> None:
    t = transfer(multicast=True, concurrent=1, sends=(prim.SendSpec(3, 3),))
    _, cycles = prim.dram_read_stage(BH, (t,))
    read = 12 * math.ceil(2048 / BH.dram.reader_bytes_per_cycle)
    send = 12 * prim.multicast_send(BH, 2048, 4)
    latency = BH.dram.read_latency_cycles + prim.multicast_handshake(BH, 3)
    assert cycles.eval({}) == latency + read + send


def test_a_multicast_to_more_cores_waits_for_more_acknowledgements() -> None:
    noc = BH.noc
    small, full = prim.multicast_send(BH, 2048, 4), prim.multicast_send(BH, 2048, 130)
    assert small == math.ceil(
        2048 / noc.size_bandwidth(noc.max_packet_bytes)
        + 2048 * 3 * noc.multicast_ack_cycles_per_receiver / noc.max_packet_bytes
    )
    assert full > small
    # the handshake: data and flag, each a write to the farthest receiver; the ready
    # signal lands during the sender's DRAM read (longer than a semaphore write on BH)
    sem, hop = BH.fixed.semaphore_cycles, noc.hop_cycles
    assert sem < BH.dram.read_latency_cycles
    assert prim.multicast_handshake(BH, 3) == 2 * (sem + 2 * hop)


def test_a_ready_signal_longer_than_the_dram_read_latency_shows_its_excess() -> None:
    slow = replace(BH, fixed=replace(BH.fixed, semaphore_cycles=600))
    write = 600 + 2 * BH.noc.hop_cycles
    excess = 600 - BH.dram.read_latency_cycles
    assert prim.multicast_handshake(slow, 3) == excess + 2 * write


def test_only_the_other_engines_reads_share_a_transfers_links() -> None:
    link = (0, 1, 1, 0)
    load = ((link, 40.0),)
    rate = BH.noc.link_effective_bytes_per_cycle
    alone = 12 * math.ceil(2048 * 40 / rate)
    a = transfer(read_links=load, links=load, concurrent=1)
    same = transfer(what="load b", read_links=load, links=load, concurrent=1)
    other = transfer(what="load b", read_links=load, links=load, concurrent=1, engine="writer")
    assert prim.read_phase(BH, a, (a,)).eval({}) == alone
    assert prim.read_phase(BH, a, (a, same)).eval({}) == alone
    assert prim.read_phase(BH, a, (a, other)).eval({}) == 2 * alone


def test_multicast_senders_of_two_operands_share_the_banks_by_stream_count() -> None:
    """A's 65 multicast senders and B's 10 start each block together (their groups'
    handshakes pace them), and the banks serve every stream fairly: B's 10 streams get
    10 / 75 of the banks while A's run, so B's read lasts ω_B + min(ω_B · 65 / 10, ω_A).
    A unicast load's readers each start when their own slot frees and drift apart: a
    multicast sender slips between their bursts, and no share is charged."""
    a = transfer(multicast=True, concurrent=65, tiles=Const(8))
    b = transfer(what="load b", multicast=True, concurrent=10, tiles=Const(32), engine="writer")
    w_a, w_b = (prim.dram_wide(BH, t).eval({}) for t in (a, b))
    alone = prim.read_phase(BH, b, (b,)).eval({})
    shared = prim.read_phase(BH, b, (a, b)).eval({})
    assert shared == max(alone, w_b + min(math.ceil(w_b * 65 / 10), w_a)) > alone
    # A's many streams lose little to B's few: its share of B is B's length at most.
    a_alone = prim.read_phase(BH, a, (a,)).eval({})
    a_shared = prim.read_phase(BH, a, (a, b)).eval({})
    assert a_shared == max(a_alone, w_a + min(math.ceil(w_a * 10 / 65), w_b))
    # A read by every core (unicast): B's lone stream slips between its readers' bursts.
    unicast = replace(a, multicast=False, concurrent=130)
    assert prim.read_phase(BH, b, (unicast, b)).eval({}) == alone


def test_an_engines_part_of_a_stage_counts_the_other_engines_reads() -> None:
    """What the writer is busy with in a load stage it shares with the reader
    (`engine_read_stage`, GEMM's B beside A): its own multicast read and sends, slowed
    by A's streams at the banks, after one read latency; nothing for an engine that
    loads nothing there."""
    a = transfer(multicast=True, concurrent=65, tiles=Const(8))
    b = transfer(what="load b", multicast=True, concurrent=10, tiles=Const(32), engine="writer")
    shared = prim.engine_read_stage(BH, (a, b), "writer").eval({})
    alone = prim.engine_read_stage(BH, (b,), "writer").eval({})
    sends = prim.send_time(BH, b).eval({})
    read = prim.read_phase(BH, b, (a, b)).eval({})
    latency = BH.dram.read_latency_cycles + prim.send_latency(BH, b.sends)
    assert shared == read + sends + latency > alone
    assert prim.engine_read_stage(BH, (a,), "writer") == Const(0)


def test_a_refetch_shares_the_banks_with_the_other_engines_reads_only() -> None:
    # 24 cores each read 12 tiles: a DRAM-bound stream (the banks, not the engine).
    a = transfer()
    own = prim.dram_wide(BH, a).eval({})
    lat = BH.dram.read_latency_cycles
    alone = prim.read_phase(BH, a, (a,)).eval({})
    assert prim.refill_cycles(BH, a, (a,)).eval({}) == alone + lat
    # Another load on the same engine comes before or after it: no bank time taken.
    same = transfer(what="load b")
    assert prim.refill_cycles(BH, a, (a, same)).eval({}) == alone + lat
    # A shorter stream on the other engine takes its own length, a longer one as long
    # as this one's: fair shares of the banks.
    short = transfer(what="load b", tiles=Const(4), engine="writer")
    long = transfer(what="load b", tiles=Const(48), engine="writer")
    d_short = prim.dram_wide(BH, short).eval({})
    assert prim.refill_cycles(BH, a, (a, short)).eval({}) == max(alone, own + d_short) + lat
    assert prim.refill_cycles(BH, a, (a, long)).eval({}) == max(alone, 2 * own) + lat


def busiest_link_oracle(
    arch: Arch, transfers: tuple[prim.TransferSpec, ...], env: dict[str, int]
) -> int:
    """Every link's cycles for the stage's bytes, the largest: no link dropped."""
    rate = arch.noc.link_effective_bytes_per_cycle
    shares: dict[object, list[float]] = {}
    for i, t in enumerate(transfers):
        for link, share in t.links:
            shares.setdefault(link, [0.0] * len(transfers))[i] += share
    return max(
        sum(
            t.tiles.eval(env) * prim.per_tile(t.tile_bytes * round(s, 6), rate)
            for t, s in zip(transfers, vec, strict=True)
            if round(s, 6) > 0
        )
        for vec in shares.values()
    )


def test_the_busiest_link_keeps_every_link_that_can_be_the_busiest() -> None:
    # real patterns (an 8x8 grid, multicast rows and columns, the DRAM reads and writes),
    # the same link loads passed twice and as equal copies: the cached dominance must
    # give the brute-force maximum for every tile count
    wh = load_arch("wormhole_n150")
    tm, tn = Sym("tm", 32, 512, 32), Sym("tn", 32, 512, 32)
    a = nocmap.load_link_load(wh, "reader", (8, 8), "multicast", (1, 8))
    b = nocmap.load_link_load(wh, "writer", (8, 8), "multicast", (8, 1))
    u = nocmap.load_link_load(wh, "reader", (4, 8), "unicast", (1, 1))
    out = nocmap.dram_link_load(wh, 1, nocmap.all_cores((8, 8)), write=True)
    stages = [
        (transfer(tiles=tm, links=a), transfer(tiles=tn, links=b, engine="writer")),
        (transfer(tiles=tm, links=u), transfer(tiles=tn * 2, links=b, engine="writer")),
        (transfer(tiles=tm * tn, links=out),),
        (transfer(tiles=tm, links=tuple(list(a))), transfer(tiles=tn, links=tuple(list(b)))),
    ]
    for stage in (*stages, *stages):
        bound = prim.link_bound(wh, stage)
        for env in ({"tm": 32, "tn": 512}, {"tm": 512, "tn": 32}, {"tm": 96, "tn": 160}):
            assert bound.eval(env) == busiest_link_oracle(wh, stage, env)


def test_a_narrow_block_reads_over_its_own_banks_routes() -> None:
    """8 senders down the left column of an 8x8 grid each read a block one tile wide of
    a tensor 8 tiles wide: on Blackhole's 8 banks each sender's pages all sit in one
    bank (the sender's column block), so its bytes take that bank's route alone. Under
    that width the read phase is the busiest of those routes; a block as wide as the
    banks' period spreads over every bank as before."""
    tn = Sym("tn", 32, 256, 32)
    senders = nocmap.load_readers("writer", (8, 8), "multicast", (1, 8))
    even = nocmap.load_read_link_load(BH, "writer", (8, 8), "multicast", (1, 8))
    one_bank = nocmap.bank_read_peak(BH, 1, tuple((c, (c[0],)) for c in senders))
    assert one_bank == 3.0 > nocmap.peak(even)  # three routes share a link
    # the same senders each reading all 8 banks: the even spread
    every = nocmap.bank_read_peak(BH, 1, tuple((c, tuple(range(8))) for c in senders))
    assert every == nocmap.peak(even)
    t = transfer(tiles=Const(64), concurrent=8, engine="writer", read_links=even)
    narrow = replace(t, narrow=((tn.eq(32), one_bank),))
    rate = BH.noc.link_effective_bytes_per_cycle
    assert narrow and prim.read_phase(BH, narrow, (narrow,)).eval({"tn": 32}) == 64 * math.ceil(
        2048 * 3.0 / rate
    )
    wide = prim.read_phase(BH, narrow, (narrow,)).eval({"tn": 256})
    assert wide == prim.read_phase(BH, t, (t,)).eval({}) < 64 * math.ceil(2048 * 3.0 / rate)


def test_a_group_spanning_rows_and_columns_is_sent_twice() -> None:
    """A 4x2 group: the sender sends along its row (one receiver: a unicast write) and
    then over the other three rows (six receivers), one after the other."""
    sends = (prim.SendSpec(1, 1), prim.SendSpec(6, 4))
    t = transfer(multicast=True, concurrent=1, sends=sends)
    _, cycles = prim.dram_read_stage(BH, (t,))
    read = 12 * math.ceil(2048 / BH.dram.reader_bytes_per_cycle)
    send = 12 * (prim.multicast_send(BH, 2048, 2) + prim.multicast_send(BH, 2048, 7))
    sem, hop = BH.fixed.semaphore_cycles, BH.noc.hop_cycles
    # the ready signal lands during the DRAM read (semaphore < read latency on Blackhole)
    unicast = sem  # one write, whose barrier covers the data
    multicast = 2 * (sem + 3 * hop)  # data and flag, 4 hops away
    assert prim.send_latency(BH, sends) == unicast + multicast
    assert cycles.eval({}) == BH.dram.read_latency_cycles + unicast + multicast + read + send
    # one send to the whole group (a single row) costs one handshake and one send
    row = transfer(multicast=True, concurrent=1, sends=(prim.SendSpec(7, 7),))
    _, one = prim.dram_read_stage(BH, (row,))
    latency = BH.dram.read_latency_cycles + prim.multicast_handshake(BH, 7)
    assert one.eval({}) == latency + read + 12 * prim.multicast_send(BH, 2048, 8)


def test_a_load_stages_floor_is_below_its_cost_under_every_copy_mode() -> None:
    # the floor depends only on the blocks and engines; the stage's cost on the modes,
    # groups, bank spread and links too: the floor never exceeds it
    tm = Sym("tm", 32, 512, 32)
    a = transfer(tiles=tm * 4 // 32)
    b = transfer(what="load b", tiles=Const(8), engine="writer")
    narrow = prim.BankSpread(rows=Const(3), period=8, col_blocks=1, row_blocks=24)
    variants = [
        (a, b),
        (replace(a, multicast=True, concurrent=6, sends=(prim.SendSpec(3, 3),)), b),
        (replace(a, banks=narrow), replace(b, engine="reader")),
    ]
    for transfers in variants:
        floor = prim.dram_read_floor(BH, transfers)
        _, cycles = prim.dram_read_stage(BH, transfers)
        for v in tm.domain():
            assert floor.eval({"tm": v}) <= cycles.eval({"tm": v})
    # the same blocks on the same engines: the same floor, whatever the modes
    assert prim.dram_read_floor(BH, variants[0]) == prim.dram_read_floor(BH, variants[1])
    assert prim.dram_read_floor(BH, ()) == Const(0)
