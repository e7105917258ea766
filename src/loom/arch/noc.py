"""Where the bytes of a transfer pattern go on the two NoCs (routes from the description).

Each NoC is a 2-D torus of `noc.grid_x` x `noc.grid_y` routers with dimension-order
routing: NoC0 goes east (x+1) then south (y+1), NoC1 north (y-1) then west (x-1), both
wrapping around (tt-isa-documentation WormholeB0/NoC; Blackhole keeps the scheme). A
DRAM read's response travels from the bank to the reader on the reader's NoC; a write
goes from the writer to the bank; a multicast from its sender along the tree that is the
union of the unicast routes to its receivers. Tile-layout tensors are interleaved page by
page over all banks, so a reader's bytes split evenly over the banks' routes.

These functions give *link loads*: for one transfer pattern (who reads, who sends to
whom), the bytes each directed link carries per byte that one participating core moves.
The latency model turns the largest load into a lower bound on a stage's time; the
mapping stage uses the same loads to decide which engine (NoC) issues each load. Worker
core (y, x) sits at router (worker_noc_x[x], worker_noc_y[y]).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from loom.arch.spec import Arch
from loom.ir.buffers import BufferedProgram, load_streams
from loom.ir.tile import Load, accesses

Link = tuple[int, int, int, int]
"""(noc, x, y, axis): the link leaving router (x, y) along axis 0 (x) or 1 (y)."""
Core = tuple[int, int]
"""A worker core (y, x) in grid coordinates."""
LinkLoad = tuple[tuple[Link, float], ...]
"""Links and the bytes each carries per byte moved by one participating core, sorted."""

NOC_OF_ENGINE = {"reader": 0, "writer": 1}
"""The reader data-movement engine issues on NoC0, the writer on NoC1 (TT-Metal's default
kernel placement)."""


def route(arch: Arch, noc: int, src: tuple[int, int], dst: tuple[int, int]) -> tuple[Link, ...]:
    """Links of the dimension-order route between routers `src` and `dst` (x, y)."""
    return _route(arch.noc.grid_x, arch.noc.grid_y, noc, src, dst)


@lru_cache(maxsize=65536)
def _route(
    gx: int, gy: int, noc: int, src: tuple[int, int], dst: tuple[int, int]
) -> tuple[Link, ...]:
    (x, y), (dx, dy) = src, dst
    links: list[Link] = []
    if noc == 0:
        while x != dx:
            links.append((0, x, y, 0))
            x = (x + 1) % gx
        while y != dy:
            links.append((0, x, y, 1))
            y = (y + 1) % gy
    else:
        while y != dy:
            links.append((1, x, y, 1))
            y = (y - 1) % gy
        while x != dx:
            links.append((1, x, y, 0))
            x = (x - 1) % gx
    return tuple(links)


def core_xy(arch: Arch, core: Core) -> tuple[int, int]:
    return (arch.worker_noc_x[core[1]], arch.worker_noc_y[core[0]])


@lru_cache(maxsize=4096)
def group_senders(cores: tuple[int, int], area: tuple[int, int], last: bool) -> tuple[Core, ...]:
    """The sending corner of every aligned `area` block of the `cores` grid: the first
    core, or with `last` the last one (the corner from which NoC1 runs into the block)."""
    (cy, cx), (ay, ax) = cores, area
    dy, dx = (ay - 1, ax - 1) if last else (0, 0)
    return tuple((oy + dy, ox + dx) for oy in range(0, cy, ay) for ox in range(0, cx, ax))


@lru_cache(maxsize=1024)
def all_cores(cores: tuple[int, int]) -> tuple[Core, ...]:
    """Every core of the grid in use, row by row (cached: the model asks per candidate)."""
    return tuple((y, x) for y in range(cores[0]) for x in range(cores[1]))


def dram_link_load(arch: Arch, noc: int, cores: tuple[Core, ...], write: bool) -> LinkLoad:
    """Every core of `cores` reads (writes) pages interleaved over all banks on `noc`:
    bytes per link, summed over the cores, per byte one core moves."""
    return _dram_link_load(arch, noc, cores, write)


def bank_read_peak(arch: Arch, noc: int, reads: tuple[tuple[Core, tuple[int, ...]], ...]) -> float:
    """Each core of `reads` reads its pages evenly from its own banks (indices into
    `dram.banks`) on `noc`: the busiest link's bytes, summed over the cores, per byte one
    core reads. A block narrower than the banks' period keeps every core on a few banks
    (`loom.model.primitives.BankSpread`), so its bytes crowd those banks' routes."""
    key = (arch.key, noc, reads, "bank peak")
    if key not in _PEAK:
        pairs = [(b, y, x, 1.0 / len(banks)) for (y, x), banks in reads for b in banks]
        b, y, x, w = (np.array(v) for v in zip(*pairs, strict=True))
        _PEAK[key] = float((w @ _bank_matrix(arch, noc)[b, y, x]).max(initial=0.0))
    return _PEAK[key]


_PEAK: dict[tuple[object, ...], float] = {}


def _bank_matrix(arch: Arch, noc: int) -> np.ndarray:
    """[bank, y, x, link]: 1 where the route from the bank to core (y, x) on `noc` runs."""
    key = (arch.key, noc, "banks")
    if key not in _VECTORS:
        matrix = np.zeros((len(arch.dram.banks), arch.grid_y, arch.grid_x, _link_count(arch)))
        for i, bank in enumerate(arch.dram.banks):
            for y in range(arch.grid_y):
                for x in range(arch.grid_x):
                    for link in route(arch, noc, (bank.noc_x, bank.noc_y), core_xy(arch, (y, x))):
                        matrix[i, y, x, _link_index(arch, link)] = 1.0
        _VECTORS[key] = matrix
    return _VECTORS[key]


def _dram_link_load(arch: Arch, noc: int, cores: tuple[Core, ...], write: bool) -> LinkLoad:
    key = (arch.key, noc, cores, write)
    if key not in _CACHE:
        matrix = _core_matrix(arch, noc, write)
        ys = np.fromiter((c[0] for c in cores), dtype=np.int64, count=len(cores))
        xs = np.fromiter((c[1] for c in cores), dtype=np.int64, count=len(cores))
        _CACHE[key] = _as_load(arch, matrix[ys, xs].sum(axis=0))
    return _CACHE[key]


def _link_count(arch: Arch) -> int:
    return 2 * arch.noc.grid_x * arch.noc.grid_y * 2


def _link_index(arch: Arch, link: Link) -> int:
    noc, x, y, axis = link
    return ((noc * arch.noc.grid_y + y) * arch.noc.grid_x + x) * 2 + axis


def _as_load(arch: Arch, vector: np.ndarray) -> LinkLoad:
    gx, gy = arch.noc.grid_x, arch.noc.grid_y
    out = []
    for i in np.flatnonzero(vector):
        axis, rest = int(i) % 2, int(i) // 2
        x, rest = rest % gx, rest // gx
        y, noc = rest % gy, rest // gy
        out.append(((noc, x, y, axis), float(vector[i])))
    return tuple(sorted(out))


def _core_matrix(arch: Arch, noc: int, write: bool) -> np.ndarray:
    """[y, x, link]: bytes per link per byte core (y, x) reads (writes), interleaved
    over all banks."""
    key = (arch.key, noc, write)
    if key not in _VECTORS:
        banks = [(b.noc_x, b.noc_y) for b in arch.dram.banks]
        matrix = np.zeros((arch.grid_y, arch.grid_x, _link_count(arch)))
        for y in range(arch.grid_y):
            for x in range(arch.grid_x):
                xy = core_xy(arch, (y, x))
                for bank in banks:
                    path = route(arch, noc, xy, bank) if write else route(arch, noc, bank, xy)
                    for link in path:
                        matrix[y, x, _link_index(arch, link)] += 1.0 / len(banks)
        _VECTORS[key] = matrix
    return _VECTORS[key]


_VECTORS: dict[tuple[object, ...], np.ndarray] = {}


def multicast_link_load(
    arch: Arch, noc: int, cores: tuple[int, int], area: tuple[int, int]
) -> LinkLoad:
    """Every group's sender multicasts to its aligned `area` block on `noc` (sending
    corner as in `group_senders`): bytes per link per byte one sender sends."""
    key = (arch.key, noc, cores, area, "mcast")
    if key in _CACHE:
        return _CACHE[key]
    usage: dict[Link, float] = {}
    for sy, sx in group_senders(cores, area, last=noc == 1):
        oy, ox = sy - sy % area[0], sx - sx % area[1]
        src = core_xy(arch, (sy, sx))
        tree: set[Link] = set()
        for y in range(oy, oy + area[0]):
            for x in range(ox, ox + area[1]):
                if (y, x) != (sy, sx):
                    tree.update(route(arch, noc, src, core_xy(arch, (y, x))))
        for link in tree:
            usage[link] = usage.get(link, 0.0) + 1.0
    out = tuple(sorted(usage.items()))
    _CACHE[key] = out
    return out


def peak(load: LinkLoad) -> float:
    """The busiest link's bytes per byte moved by one participating core."""
    return max((v for _, v in load), default=0.0)


_CACHE: dict[tuple[object, ...], LinkLoad] = {}


def load_link_load(
    arch: Arch, engine: str, cores: tuple[int, int], mode: str, area: tuple[int, int]
) -> LinkLoad:
    """Link loads of one load issued by `engine` over the `cores` grid in use: every
    core's DRAM reads (unicast), or every group sender's reads plus its multicast tree,
    the sender on the corner from which the engine's NoC enters the group."""
    noc = NOC_OF_ENGINE.get(engine, 0)
    if mode != "multicast" or area == (1, 1):
        return dram_link_load(arch, noc, all_cores(cores), write=False)
    key = (arch.key, noc, cores, area, "load")
    if key not in _CACHE:
        merged = dict(load_read_link_load(arch, engine, cores, mode, area))
        for link, share in multicast_link_load(arch, noc, cores, area):
            merged[link] = merged.get(link, 0.0) + share
        _CACHE[key] = tuple(sorted(merged.items()))
    return _CACHE[key]


def load_read_link_load(
    arch: Arch, engine: str, cores: tuple[int, int], mode: str, area: tuple[int, int]
) -> LinkLoad:
    """The DRAM-read part of `load_link_load`: the reads of every core (unicast) or of
    every group sender (multicast), without the multicast trees."""
    noc = NOC_OF_ENGINE.get(engine, 0)
    return dram_link_load(arch, noc, load_readers(engine, cores, mode, area), write=False)


def load_readers(
    engine: str, cores: tuple[int, int], mode: str, area: tuple[int, int]
) -> tuple[Core, ...]:
    """The cores that read a load's blocks from DRAM: every core (unicast), or every
    group's sender (multicast), on the corner from which the engine's NoC enters."""
    if mode != "multicast" or area == (1, 1):
        return all_cores(cores)
    return group_senders(cores, area, last=NOC_OF_ENGINE.get(engine, 0) == 1)


def combined_peak(loads: list[LinkLoad]) -> float:
    """The busiest link when several patterns move the same bytes at once."""
    total: dict[Link, float] = {}
    for load in loads:
        for link, share in load:
            total[link] = total.get(link, 0.0) + share
    return max(total.values(), default=0.0)


def _order_cost(loads: list[tuple[str, LinkLoad]]) -> float:
    key = tuple((engine, id(ld)) for engine, ld in loads)
    if key not in _PEAKS:
        _PEAKS[key] = max(
            combined_peak([ld for engine, ld in loads if engine == e]) for e in ("reader", "writer")
        )
    return _PEAKS[key]


_PEAKS: dict[tuple[tuple[str, int], ...], float] = {}
"""Busiest link of an engine order, by the identities of its (cached, kept) link loads."""


def choose_load_engines(
    buffered: BufferedProgram,
    cores: tuple[int, int],
    plans: dict[int, tuple[str, tuple[int, int]]],
    arch: Arch,
) -> dict[int, str]:
    """The engine of every buffered load (by access index), given each access's copy
    mode and group area over the `cores` grid in use.

    Starts from the buffer plan's engines; in every stream with two load allocations,
    the other orders (the two traded; both on one engine, for interchangeable blocks)
    are taken when one lowers the busiest link of either NoC (ties keep the plan's)."""
    key = (id(buffered), arch.key, cores, tuple(sorted(plans.items())))
    hit = _CHOICES.get(key)
    if hit is not None and hit[0] is buffered:
        return dict(hit[1])
    chosen = _choose(buffered, cores, plans, arch)
    _CHOICES[key] = (buffered, chosen)
    return dict(chosen)


_CHOICES: dict[tuple[object, ...], tuple[BufferedProgram, dict[int, str]]] = {}
"""Choices per buffer plan (kept alive with its entry, so the id is not reused) and
pattern: many candidates share their cores in use and copy plans."""


def _load_scopes(
    buffered: BufferedProgram, ops: Iterable[int] | None = None
) -> tuple[dict[int, str], dict[int, str], dict[int, list[int]]]:
    """Of the loads among access indices `ops` (None: all): each one's plan engine, its
    allocation, and the loads of every stream (`loom.ir.buffers.load_streams`: the loads
    of one loop), by the stream's position."""
    wanted = None if ops is None else set(ops)
    owner = {b: a for a in buffered.allocations for b in a.buffers}
    stream_of = {
        a.name: k
        for k, stream in enumerate(
            load_streams(buffered.program, buffered.buffers, buffered.allocations)
        )
        for a in stream
    }
    engine_of: dict[int, str] = {}
    alloc_of: dict[int, str] = {}
    members: dict[int, list[int]] = {}
    for i, op in enumerate(accesses(buffered.program.body)):
        vb = buffered.buffer_of(op.result.name) if isinstance(op, Load) else None
        if vb is None or vb.role != "load" or vb.name not in owner:
            continue
        if wanted is not None and i not in wanted:
            continue
        engine_of[i] = vb.producer
        alloc_of[i] = owner[vb.name].name
        members.setdefault(stream_of[owner[vb.name].name], []).append(i)
    return engine_of, alloc_of, members


def split_loads(buffered: BufferedProgram) -> tuple[int, ...]:
    """Access indices of the loads the chooser deals to both engines: the two loads of
    a stream (the loads of one loop) holding two load allocations that are not
    interchangeable blocks (GEMM's A and B; `_orders` keeps them on different engines).
    Both on the reader is the other realization of such a candidate
    (`loom.mapping.engines`): the chooser weighs links only and that order loads one NoC
    more, but a writer that also loads in a loop
    stores each wave's result between two of its loads, in series with the compute,
    where a writer that only stores drains it while the next wave computes. Which is
    faster depends on the block sizes, so both are candidates and the model decides."""
    _, alloc_of, members = _load_scopes(buffered)
    split: list[int] = []
    for ops in members.values():
        allocs = sorted({alloc_of[i] for i in ops})
        if len(allocs) == 2 and not _alike(buffered, allocs):
            split.extend(ops)
    return tuple(sorted(split))


def _choose(
    buffered: BufferedProgram,
    cores: tuple[int, int],
    plans: dict[int, tuple[str, tuple[int, int]]],
    arch: Arch,
) -> dict[int, str]:
    engine_of, alloc_of, members = _load_scopes(buffered, plans)

    def links(i: int, engine: str) -> LinkLoad:
        mode, area = plans[i]
        return load_link_load(arch, engine, cores, mode, area)

    moved: dict[str, str] = {}
    for ops in members.values():
        allocs = sorted({alloc_of[i] for i in ops})
        if len(allocs) != 2:
            continue
        first = {a: engine_of[next(i for i in ops if alloc_of[i] == a)] for a in allocs}
        orders = _orders(first, _alike(buffered, allocs))
        costs = [
            _order_cost([(order[alloc_of[i]], links(i, order[alloc_of[i]])) for i in ops])
            for order in orders
        ]
        best = min(range(len(orders)), key=lambda k: (costs[k], k))
        if costs[best] < costs[0] - 1e-9:
            moved.update(orders[best])
    return {i: moved.get(alloc_of[i], e) for i, e in engine_of.items()}


def _alike(buffered: BufferedProgram, allocs: list[str]) -> bool:
    """Whether two load allocations are interchangeable blocks (the same layout and
    dtype: the loads one circular buffer could hold, as flash attention's K and V)."""
    a, b = (buffered.allocation_of_name(name) for name in allocs)
    return a.layout == b.layout and a.dtype == b.dtype


def _orders(plan: dict[str, str], alike: bool) -> list[dict[str, str]]:
    """The engine orders compared for two load allocations, the plan's first: the two
    traded, and for interchangeable loads both on one engine (one NoC may carry both
    at a lower peak than the other NoC carries one: on Wormhole every DRAM response to
    NoC1 climbs the bank's column, on NoC0 it spreads along the bank's row)."""
    a, b = sorted(plan)
    orders = [plan]
    if plan[a] != plan[b]:
        orders.append({a: plan[b], b: plan[a]})
    if alike:
        orders += [{a: e, b: e} for e in ("reader", "writer")]
    unique: list[dict[str, str]] = []
    for order in orders:
        if order not in unique:
            unique.append(order)
    return unique
