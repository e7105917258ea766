"""Data movements as *legs*: one fluid flow plus the latency that follows it.

A blocking copy issues a batch of NoC transactions and waits at a barrier for the last
acknowledgement. Its leg carries all the batch's bytes through the resources it uses
(weighted when the bytes spread over several DRAM banks), at most at the rate of one
stream of transactions of that size (the size-dependent bandwidth, the RISC-V issue rate,
per-engine DRAM limits). The barrier returns the leg's `latency` after the last byte moved.

DRAM tensors are interleaved page by page (one tile per page) round-robin over the banks
in row-major tile order, so a window's bytes spread over the banks by simple counting.
One engine copying pages of several banks is held to the measured per-engine DRAM rate
(dram.reader_bytes_per_cycle); a copy within one bank is held only by that bank (the
bank-sharded measurements reach the bank rate, above the interleaved per-engine rate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from loom.sim.params import SimParams
from loom.sim.topology import XY, Core, Topology


@dataclass(frozen=True, slots=True)
class Leg:
    """One flow: `nbytes` through `res` (weights `w`) at most at `cap`, then `latency`."""

    nbytes: float
    cap: float
    res: np.ndarray
    w: np.ndarray
    latency: float
    category: str
    """Bytes-moved bucket: dram_read, dram_write, noc_unicast, noc_multicast."""
    delivered: float = 0.0
    """Bytes that reach receivers (multicast: nbytes x receivers)."""


def window_bank_counts(
    n_banks: int, tensor_cols: int, row: int, col: int, rows: int, cols: int
) -> tuple[int, ...]:
    """Tiles of the window [row, row+rows) x [col, col+cols) held by each bank."""
    return _bank_counts(
        n_banks, tensor_cols % n_banks, (row * tensor_cols + col) % n_banks, rows, cols
    )


@lru_cache(maxsize=8192)
def _bank_counts(n_banks: int, stride: int, first: int, rows: int, cols: int) -> tuple[int, ...]:
    """Row r of the window starts in bank (first + r * stride) mod n_banks."""
    full, rem = divmod(cols, n_banks)
    counts = [full * rows] * n_banks
    for r in range(rows):
        start = first + r * stride
        for i in range(rem):
            counts[(start + i) % n_banks] += 1
    return tuple(counts)


def run_bank_counts(n_banks: int, first_bank: int, pages: int) -> tuple[int, ...]:
    """Pages [0, pages) of a buffer whose first page is in `first_bank`."""
    full, rem = divmod(pages, n_banks)
    return tuple(full + int((b - first_bank) % n_banks < rem) for b in range(n_banks))


class LegBuilder:
    """Builds legs for one architecture, caching route arrays.

    Legs and usage arrays are immutable and depend only on the parameters, so builders
    of equal parameters share their caches (:func:`_shared`): a process that simulates
    many programs of one architecture builds each leg once, not once per simulation
    (a flash decode simulation spends a quarter of its time building DRAM legs)."""

    def __init__(self, topo: Topology, params: SimParams) -> None:
        self.topo = topo
        self.p = params
        caches = _shared(params)
        if caches is None:
            caches = _SHARED[params] = (
                lru_cache(maxsize=4096)(self._dram_usage_uncached),
                lru_cache(maxsize=4096)(self._unicast_usage_uncached),
                lru_cache(maxsize=1024)(self._mcast_usage_uncached),
                {},
            )
        self._dram_usage, self._unicast_usage, self._mcast_usage, self._dram_legs = caches
        if len(self._dram_legs) > _MAX_DRAM_LEGS:
            self._dram_legs.clear()

    # ----- DRAM -----------------------------------------------------------------------

    def dram(
        self, noc: int, core: Core, counts: tuple[int, ...], page_bytes: int, write: bool
    ) -> Leg:
        """Read (or write) the pages counted per bank in `counts` into (from) `core`.

        Legs are immutable and a program's copies repeat the same few (core, bank
        pattern, page size) combinations, so each is built once."""
        key = (noc, core, counts, page_bytes, write)
        leg = self._dram_legs.get(key)
        if leg is None:
            leg = self._dram_legs[key] = self._dram_leg(noc, core, counts, page_bytes, write)
        return leg

    def _dram_leg(
        self, noc: int, core: Core, counts: tuple[int, ...], page_bytes: int, write: bool
    ) -> Leg:
        pages = sum(counts)
        p = self.p
        res, w = self._dram_usage(noc, self.topo.core_xy(core), counts, page_bytes, write)
        cap = p.unicast_cap(page_bytes, write)
        interleaved = sum(1 for n in counts if n) > 1
        if write:
            latency, category = p.dram_write_latency_cycles, "dram_write"
            engine_cap = p.dram_writer_bytes_per_cycle
        else:
            latency, category = p.dram_read_latency_cycles, "dram_read"
            engine_cap = p.dram_reader_bytes_per_cycle
        if interleaved:  # the measured per-engine limit of interleaved (multi-bank) copies
            cap = min(cap, engine_cap)
        nbytes = pages * page_bytes
        return Leg(nbytes, cap, res, w, latency, category, nbytes)

    def _dram_usage_uncached(
        self, noc: int, core_xy: XY, counts: tuple[int, ...], page_bytes: int, write: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        topo = self.topo
        pages = sum(counts)
        cost = self.p.bank_cost(page_bytes, write, sum(1 for n in counts if n) > 1)
        usage: dict[int, float] = {topo.port_id(noc, core_xy, absorb=not write): 1.0}
        for bank, n in enumerate(counts):
            if n == 0:
                continue
            share = n / pages
            usage[topo.bank_id(bank)] = usage.get(topo.bank_id(bank), 0.0) + share * cost
            bank_xy = topo.bank_xy(bank)
            route = (
                topo.route(noc, core_xy, bank_xy) if write else topo.route(noc, bank_xy, core_xy)
            )
            for link in route:
                usage[link] = usage.get(link, 0.0) + share
        return _arrays(usage)

    # ----- core to core ---------------------------------------------------------------

    def write(self, noc: int, src: Core, dst: Core, nbytes: float, txn_bytes: float) -> Leg:
        """A unicast write of `nbytes` in transactions of `txn_bytes`, then its barrier."""
        s, d = self.topo.core_xy(src), self.topo.core_xy(dst)
        res, w = self._unicast_usage(noc, s, d)
        latency = self.p.write_latency(self.topo.round_trip_hops(noc, s, d))
        cap = self.p.unicast_cap(txn_bytes, write=True)
        return Leg(nbytes, cap, res, w, latency, "noc_unicast", nbytes)

    def send_block(self, noc: int, src: Core, dst: Core, nbytes: float) -> Leg:
        """A pipe's block sent to its one receiver as one unicast write, which lands after
        one handshake step (`SimParams.handshake_latency`)."""
        s, d = self.topo.core_xy(src), self.topo.core_xy(dst)
        res, w = self._unicast_usage(noc, s, d)
        latency = self.p.handshake_latency(self.topo.hops(noc, s, d))
        cap = self.p.unicast_cap(nbytes, write=True)
        return Leg(nbytes, cap, res, w, latency, "noc_unicast", nbytes)

    def read(self, noc: int, reader: Core, target: Core, nbytes: float, txn_bytes: float) -> Leg:
        """A unicast read: data flows from `target` to `reader` on the reader's NoC."""
        s, d = self.topo.core_xy(target), self.topo.core_xy(reader)
        res, w = self._unicast_usage(noc, s, d)
        return Leg(
            nbytes,
            self.p.unicast_cap(txn_bytes),
            res,
            w,
            self.p.read_latency_cycles,
            "noc_unicast",
            nbytes,
        )

    def _unicast_usage_uncached(self, noc: int, s: XY, d: XY) -> tuple[np.ndarray, np.ndarray]:
        topo = self.topo
        usage = {topo.port_id(noc, s, absorb=False): 1.0, topo.port_id(noc, d, absorb=True): 1.0}
        for link in topo.route(noc, s, d):
            usage[link] = 1.0
        return _arrays(usage)

    def multicast(
        self,
        noc: int,
        src: Core,
        dsts: Sequence[Core],
        nbytes: float,
        txn_bytes: float,
        linked: bool,
    ) -> Leg:
        """Back-to-back multicast writes of `nbytes` in transactions of `txn_bytes` from
        `src` to every core of `dsts` (a microbenchmark batch)."""
        n, res, w, hops = self._mcast(noc, src, dsts)
        count = max(round(nbytes / txn_bytes), 1)
        cap = self.p.multicast_cap(txn_bytes, count, n, hops, linked)
        latency = self.p.write_latency(hops)
        return Leg(nbytes, cap, res, w, latency, "noc_multicast", nbytes * n)

    def multicast_block(self, noc: int, src: Core, dsts: Sequence[Core], nbytes: float) -> Leg:
        """One block sent the way TT-Metal's kernels multicast: the data as one linked
        transaction, then an unlinked flag (semaphore set) that releases the path. The
        data and the flag each land after one handshake step to the farthest receiver
        (`SimParams.handshake_latency`)."""
        s = self.topo.core_xy(src)
        far = max((self.topo.hops(noc, s, self.topo.core_xy(c)) for c in dsts), default=0)
        n, res, w, _ = self._mcast(noc, src, dsts)
        cap = self.p.linked_multicast_cap(nbytes, n)
        latency = 2 * self.p.handshake_latency(far)
        return Leg(nbytes, cap, res, w, latency, "noc_multicast", nbytes * n)

    def _mcast(
        self, noc: int, src: Core, dsts: Sequence[Core]
    ) -> tuple[int, np.ndarray, np.ndarray, int]:
        """(receivers, resources, weights, round-trip hops to the farthest receiver)."""
        s = self.topo.core_xy(src)
        d = tuple(self.topo.core_xy(c) for c in dsts)
        res, w, hops = self._mcast_usage(noc, s, d)
        return len(d), res, w, hops

    def _mcast_usage_uncached(
        self, noc: int, s: XY, d: tuple[XY, ...]
    ) -> tuple[np.ndarray, np.ndarray, int]:
        topo = self.topo
        usage = {topo.port_id(noc, s, absorb=False): 1.0}
        for xy in d:
            usage[topo.port_id(noc, xy, absorb=True)] = 1.0
        for link in topo.multicast_links(noc, s, d):
            usage[link] = 1.0
        hops = max((topo.round_trip_hops(noc, s, xy) for xy in d), default=0)
        res, w = _arrays(usage)
        return res, w, hops


_Caches = tuple[
    Callable[..., tuple[np.ndarray, np.ndarray]],
    Callable[..., tuple[np.ndarray, np.ndarray]],
    Callable[..., tuple[np.ndarray, np.ndarray, int]],
    dict[tuple[int, Core, tuple[int, ...], int, bool], Leg],
]
_SHARED: dict[SimParams, _Caches] = {}
"""Leg caches by parameters (the few most recent; equal parameters, equal topology)."""
_MAX_PARAMS = 4
_MAX_DRAM_LEGS = 200_000
"""Built DRAM legs kept at most (a few hundred bytes each), cleared beyond."""


def _shared(params: SimParams) -> _Caches | None:
    """The caches of `params`, made most recent; None when there are none yet (the
    oldest are dropped to make room)."""
    caches = _SHARED.pop(params, None)
    if caches is not None:
        _SHARED[params] = caches
        return caches
    while len(_SHARED) >= _MAX_PARAMS:
        del _SHARED[next(iter(_SHARED))]
    return None


def _arrays(usage: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    res = np.fromiter(usage.keys(), dtype=np.int64, count=len(usage))
    w = np.fromiter(usage.values(), dtype=np.float64, count=len(usage))
    return res, w
