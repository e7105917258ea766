"""The architecture description: every hardware number Loom uses, as frozen data.

Built from a YAML file by :mod:`loom.arch.load`, which validates it. The latency model
and the timing simulator both read an :class:`Arch`, independently. Units are part of
the field names (``_bytes``, ``_cycles``, ``_bytes_per_cycle``, ``_ghz``, ``_us``).
Cycles are AICLK cycles of the architecture's clock.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property

from loom.ir.formats import tile_bytes

MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


@dataclass(frozen=True)
class Tile:
    rows: int
    cols: int
    bytes_per_dtype: tuple[tuple[str, int], ...]
    """Bytes of one tile per dtype (bf16 2048, fp32 4096, bfp8 1088)."""

    def bytes(self, dtype: str) -> int:
        """Bytes of one tile of a format this architecture supports (the size itself comes
        from :func:`loom.ir.formats.tile_bytes`; the loader checks the table agrees)."""
        for name, _ in self.bytes_per_dtype:
            if name == dtype:
                return tile_bytes(dtype, self.rows, self.cols)
        raise KeyError(dtype)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.bytes_per_dtype)


@dataclass(frozen=True)
class Matmul:
    cycles_per_tile: tuple[tuple[str, int], ...]
    """Cycles of one 32x32x32 tile matmul per math fidelity (LoFi..HiFi4)."""
    row_granularity: int
    """The FPU multiplies `row_granularity` rows of in0 at once: an in0 with fewer
    rows costs as much as one with `row_granularity` rows (small-row efficiency)."""
    default_fidelity: str
    tile_overhead_cycles: int
    """Cycles a tile matmul costs beyond its fidelity phases (operand and Dst address
    stepping between tiles): the gap between the FPU's peak and what a math-bound
    matmul sustains."""

    def peak_cycles(self, fidelity: str) -> int:
        """Cycles of one tile matmul at the FPU's peak rate (the "% of peak" basis)."""
        for name, cycles in self.cycles_per_tile:
            if name == fidelity:
                return cycles
        raise KeyError(fidelity)

    def cycles(self, fidelity: str) -> int:
        """Cycles one tile matmul costs in a stream of them (what models and simulators use)."""
        return self.peak_cycles(fidelity) + self.tile_overhead_cycles

    def row_efficiency(self, rows: int) -> float:
        """Fraction of the FPU's work that is useful when in0 has `rows` rows."""
        g = self.row_granularity
        return rows / (-(-rows // g) * g)


@dataclass(frozen=True)
class Compute:
    """Per-tile costs of the non-matmul math, on the FPU and the SFPU."""

    dst_tiles: tuple[tuple[str, int], ...]
    """Dst register capacity in tiles per accumulation dtype (full sync)."""
    eltwise_cycles_per_tile: tuple[tuple[str, int], ...]
    """Cycles per 32x32 tile of each elementwise op (FPU add/sub/mul, SFPU exp/max/...)."""
    reduce_cycles_per_tile: tuple[tuple[str, int], ...]
    """Cycles per input tile of a row reduction (max, sum)."""
    unpack_bytes_per_cycle: float
    """Both unpackers together, L1 -> source registers."""
    pack_bytes_per_cycle: float
    """All packers together, destination registers -> L1."""
    pack_accumulate_bytes_per_cycle: float
    """All packers together when they add into L1 (packer L1 accumulation: each write
    reads the old value first)."""
    op_overhead_cycles: int
    """Fixed cost of starting one compute instruction sequence (init, dst acquire)."""

    def eltwise(self, op: str) -> int:
        return _lookup(self.eltwise_cycles_per_tile, op, "elementwise op")

    def reduce(self, op: str) -> int:
        return _lookup(self.reduce_cycles_per_tile, op, "reduction")

    def unpack_cycles(self, tile_bytes: int) -> int:
        return -(-tile_bytes * 1000 // round(self.unpack_bytes_per_cycle * 1000))

    def pack_cycles(self, tile_bytes: int) -> int:
        return -(-tile_bytes * 1000 // round(self.pack_bytes_per_cycle * 1000))

    def pack_accumulate_cycles(self, tile_bytes: int) -> int:
        """Cycles to add one tile into L1 (packer L1 accumulation)."""
        return -(-tile_bytes * 1000 // round(self.pack_accumulate_bytes_per_cycle * 1000))

    def dst_capacity(self, dtype: str) -> int:
        return _lookup(self.dst_tiles, dtype, "dst dtype")


@dataclass(frozen=True)
class Noc:
    count: int
    """Number of independent NoCs (reader traffic on NoC0, writer on NoC1)."""
    grid_x: int
    grid_y: int
    """Torus size in NoC coordinates (including DRAM, Ethernet and other tiles)."""
    link_bytes_per_cycle: int
    """Raw link width: one flit per cycle per direction."""
    link_effective_bytes_per_cycle: float
    """Sustained link bandwidth used for sharing among concurrent transfers."""
    hop_cycles: int
    niu_cycles: int
    """Latency of router-to-router hops, and of entering or leaving the network."""
    max_packet_bytes: int
    transfer_size_bytes_per_cycle: tuple[tuple[int, float], ...]
    """Peak bandwidth one transaction reaches at each transfer size (piecewise linear)."""
    unicast_bytes_per_cycle: float
    multicast_bytes_per_cycle: float
    multicast_linked_bytes_per_cycle: float
    """Measured per-sender throughputs of one-to-one writes and one-to-all multicast."""
    multicast_ack_cycles_per_receiver: float
    """Sender cycles per receiver per packet of a linked multicast (write acknowledgements)."""
    issue_cycles: int
    """Per-transaction issue cost of the data-movement RISC-V (reads, multicasts)."""
    write_issue_cycles: int
    """Per-transaction issue cost of a unicast write (BH issues writes faster)."""
    read_latency_cycles: int
    """Round-trip latency of one small L1-to-L1 read (different row and column)."""

    def size_bandwidth(self, nbytes: int) -> float:
        """Per-transaction bandwidth cap for a transfer of `nbytes` (interpolated)."""
        table = self.transfer_size_bytes_per_cycle
        if nbytes <= table[0][0]:
            return table[0][1] * nbytes / table[0][0]
        for (s0, b0), (s1, b1) in itertools.pairwise(table):
            if nbytes <= s1:
                return b0 + (b1 - b0) * (nbytes - s0) / (s1 - s0)
        return table[-1][1]


@dataclass(frozen=True)
class DramBank:
    noc_x: int
    noc_y: int


@dataclass(frozen=True)
class Dram:
    banks: tuple[DramBank, ...]
    bank_bytes_per_cycle: float
    """Peak bandwidth of one bank (channel share)."""
    efficiency: float
    """Achievable fraction of the peak with ideal placement (0 < efficiency <= 1)."""
    read_latency_cycles: int
    write_latency_cycles: int
    reader_bytes_per_cycle: float
    writer_bytes_per_cycle: float
    """Measured per-core DRAM read / write throughput of one engine (the ideal tests)."""
    write_efficiency: float
    """A bank's write bandwidth as a fraction of its read bandwidth: a written byte holds
    the bank 1 / write_efficiency times as long as a read one (bus turnarounds)."""
    read_request_cycles: float
    write_request_cycles: float
    """Shortest time a bank spends on one read / write request, whatever its size: a
    request smaller than this many cycles at the bank rate costs the bank this."""
    all_cores_bytes_per_cycle: float
    """Measured aggregate when every core reads interleaved pages at once (NoC0): what
    the whole grid gets from DRAM under contention, below the ideal-placement peak."""
    page_bytes: int
    """Interleaving granularity: consecutive pages go to consecutive banks."""

    @property
    def peak_bytes_per_cycle(self) -> float:
        return self.bank_bytes_per_cycle * len(self.banks)


@dataclass(frozen=True)
class Fixed:
    program_launch_us: float
    """Device-side cost of launching one program (dispatch, kernel start): what separates
    back-to-back programs replayed from a trace."""
    host_dispatch_us: float
    """Host-side cost of dispatching one program without a trace (command assembly and
    submission), on top of the launch."""
    semaphore_cycles: int
    """Cost of one inter-core handshake (semaphore increment seen by the peer)."""


@dataclass(frozen=True)
class Arch:
    name: str
    description: str
    grid_x: int
    grid_y: int
    """Compute grid: columns (x) and rows (y) of Tensix cores usable by a program."""
    worker_noc_x: tuple[int, ...]
    worker_noc_y: tuple[int, ...]
    """NoC coordinates of each compute column and row (for routes and DRAM distance)."""
    clock_ghz: float
    l1_bytes: int
    l1_usable_bytes: int
    """Bytes of L1 per core, and the part available for buffers after firmware."""
    dataflow_buffers: int
    """Dataflow (circular) buffers one core can hold at once, whatever their size: a
    kernel needing more does not build, so it is a legality limit of the model."""
    tile: Tile
    matmul: Matmul
    compute: Compute
    noc: Noc
    dram: Dram
    fixed: Fixed
    sources: tuple[tuple[str, str], ...] = ()
    """Field path -> where its number comes from."""

    @cached_property
    def key(self) -> int:
        """The same small integer for equal descriptions, another for any other: caches
        of derived figures (routes, bank peaks) key on it, not on the name, which two
        descriptions may share (a user's edit of a built-in, a grid or bank variant)."""
        return _KEYS.setdefault(self, len(_KEYS))

    @property
    def num_cores(self) -> int:
        return self.grid_x * self.grid_y

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1e3)

    def us_to_cycles(self, us: float) -> float:
        return us * self.clock_ghz * 1e3

    @property
    def dram_peak_gbps(self) -> float:
        """DRAM peak of the chip: every bank at its peak bandwidth, in GB/s."""
        return self.dram.peak_bytes_per_cycle * self.clock_ghz

    def gbps(self, nbytes: float, cycles: float) -> float:
        """`nbytes` moved in `cycles`, in GB/s (0 for no time)."""
        return nbytes * self.clock_ghz / cycles if cycles > 0 else 0.0

    def peak_tflops(self, fidelity: str, cores: int | None = None) -> float:
        """Matmul peak of `cores` cores (default: the whole grid) at `fidelity`."""
        n = self.num_cores if cores is None else cores
        flops_per_cycle = 2 * self.tile.rows * self.tile.cols * self.tile.cols
        return n * self.clock_ghz * 1e9 * flops_per_cycle / self.matmul.peak_cycles(fidelity) / 1e12


_KEYS: dict[Arch, int] = {}


def _lookup(table: tuple[tuple[str, int], ...], key: str, what: str) -> int:
    for name, value in table:
        if name == key:
            return value
    raise KeyError(f"unknown {what} {key!r}")
