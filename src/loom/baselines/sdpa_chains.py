"""TTNN's K/V forwarding chains for non-causal SDPA: which cores read K/V from DRAM.

Source: tenstorrent/tt-metal ``ttnn/cpp/ttnn/operations/transformer/sdpa/device/
sdpa_program_factory.cpp`` @ 000e7c053de83f4dd8bb52da5aa09bda2ead7ce4 (``if (!is_causal
&& !is_chunked)``: per-core work, then ``detail::build_chains_for_heads`` and
``detail::configure_mcast_for_chains``) and ``sdpa_chain_utils.hpp`` (the version stored @
2c741005cf651673edf4e7a54d6b9255bf43af0e). The rule, as written here:

- every core ``i`` (row-major, ``(i % grid_x, i / grid_x)``) takes a run of batches x heads
  x query chunks; each (batch, head) it touches is a *segment* of that head;
- a head with segments on two or more cores gets a chain: it starts at the first of its
  cores (the last excluded) that is in no chain yet and works on that head only, and runs
  on through the head's cores in core order, wrapping past the end, until a core already
  in a chain; a chain needs two cores;
- if every core of a chain has the same query-chunk count, the injector (the core that
  reads K/V from DRAM; the others receive it from the previous core and forward it) is
  the core whose physical x is furthest from the injectors chosen so far (the first
  chain's first core when none is); otherwise the cores run heaviest first;
- the injector multicasts instead of forwarding when EVERY chain lies in one physical row,
  no other core of its head sits inside its x-range, and its cores have equal query-chunk
  counts: all or nothing.

Causal runs (and chunked prefill) build no chain: every core reads its own K/V.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CHAIN_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/"
    "sdpa_program_factory.cpp @ 000e7c053de83f4dd8bb52da5aa09bda2ead7ce4 with "
    "sdpa_chain_utils.hpp @ 2c741005cf651673edf4e7a54d6b9255bf43af0e"
)


@dataclass(frozen=True, slots=True)
class HeadWork:
    """One (batch, head) a core works on, with its run of query chunks."""

    batch: int
    head: int
    q_start: int
    q_count: int


@dataclass(frozen=True, slots=True)
class KVChain:
    """One head's forwarding chain: flat core indices in forwarding order, injector first."""

    head_id: int
    cores: tuple[int, ...]
    q_counts: tuple[int, ...]

    @property
    def injector(self) -> int:
        return self.cores[0]


@dataclass(frozen=True, slots=True)
class ChainPlan:
    """TTNN's K/V movement for one run: the chains and whether they multicast."""

    chains: tuple[KVChain, ...]
    multicast: bool
    why_not: str = ""
    """Why the chains store and forward instead of multicasting ("" when they multicast
    or when there is no chain)."""


def core_work(
    b: int, h: int, s: int, grid: tuple[int, int], q_chunk: int, split: tuple[int, int, int]
) -> tuple[tuple[HeadWork, ...], ...]:
    """Every core's (batch, head, query-chunk run)s, by flat core index, given TTNN's
    (batch, head, query-chunk) parallel factors `split`."""
    bpf, hpf, qpf = split
    q_chunks = math.ceil(s / q_chunk)
    per_b, per_h, per_q = math.ceil(b / bpf), math.ceil(h / hpf), math.ceil(q_chunks / qpf)
    out = []
    for i in range(grid[0] * grid[1]):
        b0 = min(i // (hpf * qpf) * per_b, b)
        h0 = min(i // qpf % hpf * per_h, h)
        q0 = min(i % qpf * per_q, q_chunks)
        q1 = min(q0 + per_q, q_chunks)
        work = [
            HeadWork(bb, hh, q0, q1 - q0)
            for bb in range(b0, min(b0 + per_b, b))
            for hh in range(h0, min(h0 + per_h, h))
            if q1 > q0
        ]
        out.append(tuple(work))
    return tuple(out)


def _segments(work: tuple[tuple[HeadWork, ...], ...], heads: int) -> dict[int, list[int]]:
    """Each head's cores (flat indices, in core order)."""
    seg: dict[int, list[int]] = {}
    for core, items in enumerate(work):
        for w in items:
            seg.setdefault(w.batch * heads + w.head, []).append(core)
    return seg


def _q_count(work: tuple[tuple[HeadWork, ...], ...], core: int, head_id: int, heads: int) -> int:
    return next(w.q_count for w in work[core] if w.batch * heads + w.head == head_id)


def _injector_first(order: list[int], placed: list[int], noc_x: tuple[int, ...], gx: int) -> None:
    """Swap into front the core whose physical x is furthest from the injectors so far."""
    best_pos, best = 0, -1  # with no injector yet, every distance ties: the first core
    for pos, core in enumerate(order):
        x = noc_x[core % gx]
        d = min((abs(x - p) for p in placed), default=0)
        if d > best:
            best_pos, best = pos, d
    order[0], order[best_pos] = order[best_pos], order[0]


def build_chains(
    work: tuple[tuple[HeadWork, ...], ...], heads: int, gx: int, noc_x: tuple[int, ...]
) -> tuple[KVChain, ...]:
    """The chains of every head spanning two or more cores (TTNN's chain builder)."""
    in_chain: set[int] = set()
    injector_x: list[int] = []
    chains = []
    segments = _segments(work, heads)
    for head_id in sorted(segments):
        cores = segments[head_id]
        starts = [c for c in cores[:-1] if c not in in_chain and len(work[c]) == 1]
        if len(cores) < 2 or not starts:
            continue
        start = cores.index(starts[0])
        order: list[int] = []
        for step in range(len(cores)):
            core = cores[(start + step) % len(cores)]
            if core in in_chain:
                break
            order.append(core)
        if len(order) < 2:
            continue
        counts = {c: _q_count(work, c, head_id, heads) for c in order}
        if len(set(counts.values())) == 1:
            _injector_first(order, injector_x, noc_x, gx)
        else:
            order.sort(key=lambda c: -counts[c])  # stable: heaviest first
        injector_x.append(noc_x[order[0] % gx])
        in_chain.update(order)
        chains.append(KVChain(head_id, tuple(order), tuple(counts[c] for c in order)))
    return tuple(chains)


def multicast_blocker(
    chains: tuple[KVChain, ...], work: tuple[tuple[HeadWork, ...], ...], heads: int, gx: int
) -> str:
    """Why the chains may not multicast, or "" when every one may (all or nothing)."""
    segments = _segments(work, heads)
    for chain in chains:
        rows = {c // gx for c in chain.cores}
        if len(rows) > 1:
            return f"head {chain.head_id}'s chain spans {len(rows)} core rows"
        xs = [c % gx for c in chain.cores]
        row = rows.pop()
        inside = [
            c
            for c in segments[chain.head_id]
            if c // gx == row and min(xs) <= c % gx <= max(xs) and c not in chain.cores
        ]
        if inside:
            return f"head {chain.head_id}'s core {inside[0]} lies inside its chain's row span"
        if len(set(chain.q_counts)) > 1:
            return f"head {chain.head_id}'s chain cores have unequal query-chunk counts"
    return ""


def chain_plan(
    work: tuple[tuple[HeadWork, ...], ...],
    heads: int,
    gx: int,
    causal: bool,
    noc_x: tuple[int, ...] | None = None,
) -> ChainPlan:
    """TTNN's K/V movement for a run: no chain when causal; else the chains, multicast
    when all are eligible. `noc_x` is the physical NoC x of each grid column (the
    injector choice; logical x when not given, the same order)."""
    if causal:
        return ChainPlan((), False)
    chains = build_chains(work, heads, gx, noc_x or tuple(range(gx)))
    if not chains:
        return ChainPlan((), False)
    why = multicast_blocker(chains, work, heads, gx)
    return ChainPlan(chains, not why, why)
