"""SimParams: every number the simulator uses, read from one :class:`Arch` in one place.

The simulator never holds hardware numbers of its own. Most fields copy an Arch field;
one is *derived* from Arch fields (documented on the field and listed in :data:`DERIVED`).
Calibration scripts may replace individual values with ``dataclasses.replace``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from loom.arch import Arch


@dataclass(frozen=True, slots=True)
class SimParams:
    """Numbers of one architecture, in cycles and bytes per cycle."""

    clock_ghz: float
    launch_cycles: float
    # --- NoC -------------------------------------------------------------------------
    noc_grid: tuple[int, int]
    """Torus size (x, y) in NoC coordinates."""
    worker_noc_x: tuple[int, ...]
    worker_noc_y: tuple[int, ...]
    link_bytes_per_cycle: float
    """Sustained bandwidth of one link, and of a core's injection or absorption port."""
    max_packet_bytes: int
    size_table: tuple[tuple[int, float], ...]
    """Per-transaction bandwidth cap by transfer size (bytes -> bytes/cycle)."""
    issue_cycles: float
    """RISC-V cost of issuing one read (or multicast): caps the rate at size / issue_cycles."""
    write_issue_cycles: float
    """RISC-V cost of issuing one unicast write (noc.write_issue_cycles)."""
    hop_cycles: float
    niu_cycles: float
    write_base_cycles: float
    """Issue-to-barrier cost of a write beyond its round trip (hops and NIUs). Derived from
    fixed.semaphore_cycles, a 64 B write to the next core of the same column, whose
    acknowledgement comes back around the rest of the column's ring: semaphore - 2 niu -
    noc.grid_y hops."""
    read_latency_cycles: float
    semaphore_cycles: float
    multicast_bytes_per_cycle: float
    """Throughput cap of an unlinked multicast (each packet also waits a round trip)."""
    multicast_ack_cycles: float
    """Sender cycles per receiver per packet of a linked multicast (write acks)."""
    # --- DRAM ------------------------------------------------------------------------
    bank_noc_xy: tuple[tuple[int, int], ...]
    bank_bytes_per_cycle: float
    """Achievable bandwidth of one bank: peak x efficiency."""
    dram_read_latency_cycles: float
    dram_write_latency_cycles: float
    dram_reader_bytes_per_cycle: float
    dram_writer_bytes_per_cycle: float
    """Per-core caps of one engine reading / writing pages interleaved over several banks."""
    dram_write_efficiency: float
    """A bank's write bandwidth over its read bandwidth (dram.write_efficiency)."""
    dram_read_request_cycles: float
    dram_write_request_cycles: float
    """Least bank time per read / write request, whatever its size
    (dram.read_request_cycles, dram.write_request_cycles)."""
    # --- compute ---------------------------------------------------------------------
    unpack_bytes_per_cycle: float
    """Both unpackers together (L1 -> source registers)."""
    pack_bytes_per_cycle: float
    """Packers together (Dst -> L1)."""
    pack_accumulate_bytes_per_cycle: float
    """Packers together adding into L1 (packer L1 accumulation, a read-modify-write)."""

    def size_bandwidth(self, nbytes: float) -> float:
        """Per-transaction bandwidth cap for `nbytes` (piecewise linear, as Arch.Noc)."""
        return table_bandwidth(self.size_table, nbytes)

    def packet_bytes(self, transaction_bytes: float) -> float:
        return min(transaction_bytes, self.max_packet_bytes)

    def unicast_cap(self, transaction_bytes: float, write: bool = False) -> float:
        """Rate cap of a stream of transactions of one size: size table and issue rate
        (a unicast write issues faster than a read)."""
        cap = self.size_bandwidth(self.packet_bytes(transaction_bytes))
        issue = self.write_issue_cycles if write else self.issue_cycles
        return min(cap, transaction_bytes / issue)

    def bank_cost(self, page_bytes: float, write: bool, interleaved: bool) -> float:
        """Bank capacity one byte of a DRAM copy uses, per byte of a large read: a request
        holds the bank at least `dram_*_request_cycles`, and the bytes of an interleaved
        write (pages that many writers spread over every bank) cost more than a read's
        (`dram_write_efficiency`); one engine's bank-sharded writes reach the read rate."""
        request = self.dram_write_request_cycles if write else self.dram_read_request_cycles
        floor = request * self.bank_bytes_per_cycle / page_bytes
        per_byte = 1.0 / self.dram_write_efficiency if write and interleaved else 1.0
        return max(per_byte, floor)

    def write_latency(self, round_trip_hops: int) -> float:
        """Issue-to-barrier time of a write whose data and acknowledgement together cross
        `round_trip_hops` routers (`Topology.round_trip_hops`)."""
        return self.write_base_cycles + 2 * self.niu_cycles + round_trip_hops * self.hop_cycles

    def handshake_latency(self, hops: int) -> float:
        """Latency of one step of a pipe's semaphore protocol (the block, or the flag that
        releases the receivers) to a receiver `hops` routers out: the one-hop semaphore
        write plus a router hop per further hop, the latency model's
        `multicast_handshake`. The microbenchmarks time a writer's barrier (the round
        trip, `write_latency`), not when a receiver is released, so this term is not
        re-derived from them."""
        return self.semaphore_cycles + max(hops - 1, 0) * self.hop_cycles

    def multicast_cap(
        self, transaction_bytes: float, count: int, receivers: int, hops: int, linked: bool
    ) -> float:
        """Rate cap of `count` back-to-back multicasts of `transaction_bytes` each.

        An unlinked multicast sends each packet only after the previous one's write round
        trip (to the farthest receiver) and never beats the measured unlinked multicast
        throughput. A linked multicast keeps its path for the next transaction, so each
        of its packets costs its issue or wire time plus one write acknowledgement per
        receiver; the last transaction of a linked batch releases the path and costs as
        much as an unlinked one."""
        pkt = self.packet_bytes(transaction_bytes)
        packets = max(transaction_bytes / pkt, 1.0)
        wire = pkt / self.size_bandwidth(pkt)
        unlinked_rate = min(self.multicast_bytes_per_cycle, pkt / (wire + self.write_latency(hops)))
        last = max(transaction_bytes / unlinked_rate, self.issue_cycles)
        if not linked or count <= 1:
            return transaction_bytes / last
        rest = packets * (max(wire, self.issue_cycles) + self.multicast_ack_cycles * receivers)
        return count * transaction_bytes / ((count - 1) * rest + last)

    def linked_multicast_cap(self, transaction_bytes: float, receivers: int) -> float:
        """Rate cap of one linked multicast transaction (followed by a flag that releases
        the path, whose cost is latency, not bandwidth)."""
        pkt = self.packet_bytes(transaction_bytes)
        wire = pkt / self.size_bandwidth(pkt)
        return pkt / (
            max(wire, self.issue_cycles * pkt / transaction_bytes)
            + self.multicast_ack_cycles * receivers
        )


DERIVED = (
    "write_base_cycles = fixed.semaphore_cycles - 2 noc.niu_cycles - noc.grid_y noc.hop_cycles",
)


def from_arch(arch: Arch) -> SimParams:
    """Read (or derive) every simulator number from `arch`."""
    noc, dram, fixed, comp = arch.noc, arch.dram, arch.fixed, arch.compute
    write_base = fixed.semaphore_cycles - 2 * noc.niu_cycles - noc.grid_y * noc.hop_cycles
    return SimParams(
        clock_ghz=arch.clock_ghz,
        launch_cycles=arch.us_to_cycles(fixed.program_launch_us),
        noc_grid=(noc.grid_x, noc.grid_y),
        worker_noc_x=arch.worker_noc_x,
        worker_noc_y=arch.worker_noc_y,
        link_bytes_per_cycle=noc.link_effective_bytes_per_cycle,
        max_packet_bytes=noc.max_packet_bytes,
        size_table=noc.transfer_size_bytes_per_cycle,
        issue_cycles=noc.issue_cycles,
        write_issue_cycles=noc.write_issue_cycles,
        hop_cycles=noc.hop_cycles,
        niu_cycles=noc.niu_cycles,
        write_base_cycles=write_base,
        read_latency_cycles=noc.read_latency_cycles,
        semaphore_cycles=fixed.semaphore_cycles,
        multicast_bytes_per_cycle=noc.multicast_bytes_per_cycle,
        multicast_ack_cycles=noc.multicast_ack_cycles_per_receiver,
        bank_noc_xy=tuple((b.noc_x, b.noc_y) for b in dram.banks),
        bank_bytes_per_cycle=dram.bank_bytes_per_cycle * dram.efficiency,
        dram_read_latency_cycles=dram.read_latency_cycles,
        dram_write_latency_cycles=dram.write_latency_cycles,
        dram_reader_bytes_per_cycle=dram.reader_bytes_per_cycle,
        dram_writer_bytes_per_cycle=dram.writer_bytes_per_cycle,
        dram_write_efficiency=dram.write_efficiency,
        dram_read_request_cycles=dram.read_request_cycles,
        dram_write_request_cycles=dram.write_request_cycles,
        unpack_bytes_per_cycle=comp.unpack_bytes_per_cycle,
        pack_bytes_per_cycle=comp.pack_bytes_per_cycle,
        pack_accumulate_bytes_per_cycle=comp.pack_accumulate_bytes_per_cycle,
    )


def table_bandwidth(table: tuple[tuple[int, float], ...], nbytes: float) -> float:
    """Piecewise-linear interpolation of a size -> bytes/cycle table (linear to 0 below)."""
    if nbytes <= table[0][0]:
        return table[0][1] * nbytes / table[0][0]
    for (s0, b0), (s1, b1) in itertools.pairwise(table):
        if nbytes <= s1:
            return b0 + (b1 - b0) * (nbytes - s0) / (s1 - s0)
    return table[-1][1]
