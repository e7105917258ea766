"""Transfer terms of the latency model: DRAM bank spread, the read phase of a multicast
sender, and which concurrent reads load a transfer's links."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from loom.arch import Arch, load_arch
from loom.model import primitives as prim
from loom.symbolic import Const

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


def test_a_width_coprime_with_the_banks_spreads_every_block() -> None:
    spread = prim.BankSpread(rows=Const(3), period=1, col_blocks=1, row_blocks=24)
    assert prim.dram_wide(BH, transfer(banks=spread)) == prim.dram_wide(BH, transfer())


def test_a_multicast_sender_reads_then_sends() -> None:
    t = transfer(multicast=True, concurrent=1, group=4, group_span=3)
    _, cycles = prim.dram_read_stage(BH, (t,))
    read = 12 * (math.ceil(2048 / BH.dram.reader_bytes_per_cycle) + BH.noc.issue_cycles)
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
