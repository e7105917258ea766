"""Which data-movement engine issues each load of a candidate (decided once, here).

The buffer plan (`loom.dataflow.spread_loads`) deals the load allocations of each pipe
scope to the reader (NoC0) and the writer (NoC1) in turn. Which of the two gets which
operand matters on the chip: a DRAM response travels the requesting engine's NoC, a
multicast leaves from the corner where that NoC enters its group, and the two NoCs route
in opposite directions, so the same loads load different links (`loom.arch.noc`). For
every scope with two load allocations, the plan's order, the two traded and, when the two
are interchangeable blocks (flash attention's K and V), both on one engine are compared
by the busiest link of each NoC (the loads of a scope stream at once) and the lightest
is kept (ties keep the plan's; `loom.arch.noc.choose_load_engines`). A scope's two loads
dealt to both engines, both multicast, also give a second candidate with both on the
reader: the writer then only stores, and drains each wave's result while the next wave
computes, which the links cannot weigh (the latency model does). When the writer loads
inside the grid body, that variant has a third realization (`__sl`): with a double store
block, the writer issues each wave's stores after the next wave's first loads instead of
between two waves' loads (`loom.lower.loops.with_waves_stores_late`); one store block
and program order, or two and the stores late, is a trade of L1 for overlap that the
model weighs. The choice is written on the candidate: the latency model charges it and
the lowering realizes it.
"""

from __future__ import annotations

from dataclasses import replace

from loom.arch import Arch
from loom.arch.noc import choose_load_engines
from loom.ir.buffers import BufferedProgram
from loom.ir.candidate import Candidate
from loom.ir.tile import ForLoop, Gather, If, Load, Store, accesses, walk

READER_ONLY = "__rd"
"""Name suffix of a candidate whose split loads are all on the reader."""
STORES_LATE = "__sl"
"""Name suffix of a candidate whose writer stores one wave late (`Candidate.stores_late`)."""


def assign_engines(
    buffered: BufferedProgram,
    candidate: Candidate,
    arch: Arch,
    split: tuple[int, ...] = (),
    late: tuple[int, ...] = (),
    stored: tuple[int, ...] = (),
) -> tuple[Candidate, ...]:
    """`candidate` with every load copy's engine set, and, when its `split` loads
    (`loom.arch.noc.split_loads`: the chooser deals them to both engines) all multicast,
    its second realization with them on the reader (named `__rd`), and, when besides the
    writer issues some of the `late` loads (`late_loads`) and all of those multicast too,
    as do the split loads among them, its twin storing one wave late (named `__sl`; split
    loads of the grid body itself do not matter: causal attention's q, unicast on the
    reader, beside the writer's multicast key indices, whose next wave's loads otherwise
    wait behind the previous wave's stores). When the writer issues a unicast load of a
    tile loop that also stores (`stored`, `stored_loop_loads`), the `__rd` variant moves
    those loads to the reader too (with the split loads as above), each with every load
    that shares its allocation (`_allocation_mates`). Unicast loads are read
    by every core: on one engine they double each core's reads on one NoC, and without
    the multicast handshakes the cores drift apart, so the stores' wait the model charges
    (`loom.model.banks.Banks.pass_dram`) would not describe a `__sl` twin of them;
    leaving them out also keeps the candidates few (GEMM 2048³ on Wormhole: 1 069,
    against 1 473 with a late twin for every variant whose writer multicasts, which
    compiled 1.9x slower)."""
    cores = (candidate.mapping.cores_y, candidate.mapping.cores_x)
    plans = {c.op: (c.mode, c.area) for c in candidate.copies}
    engines = choose_load_engines(buffered, cores, plans, arch)
    out = [_with_engines(candidate, engines)]
    multicast = all(plans[i][0] == "multicast" for i in split)
    unicast = (i for i in stored if plans[i][0] == "unicast")
    moved = _allocation_mates(buffered, {*(split if split and multicast else ()), *unicast})
    if any(engines.get(i) == "writer" for i in moved):
        reader_only = {i: "reader" if i in moved else e for i, e in engines.items()}
        out.append(_with_engines(candidate, reader_only, f"{candidate.name}{READER_ONLY}"))
    mine = [i for i in late if engines.get(i) == "writer"]
    loops_multicast = all(plans[i][0] == "multicast" for i in split if i in late)
    if loops_multicast and mine and all(plans[i][0] == "multicast" for i in mine):
        first = out[0]
        out.append(replace(first, name=f"{first.name}{STORES_LATE}", stores_late=True))
    return tuple(out)


def stored_loop_loads(buffered: BufferedProgram) -> tuple[int, ...]:
    """Access indices of the loads of a tile loop that also stores (a looped row's store
    pass: the chunk, a residual, a norm's weights). On the writer, each iteration's loads
    wait in program order behind the previous iteration's store, and the compute behind
    them, so the loop runs at the writer's load + compute + store per chunk; on the
    reader they stream ahead while the writer only stores, at the price of one NoC
    carrying them all. Both are candidates (`READER_ONLY`) for the unicast ones, and the
    model decides. Multicast ones stay where the chooser puts them: the model rates a
    reader that also reads and sends a norm's weights too fast with one store block
    (LayerNorm 1024x16384 on Wormhole, weight and bias moved too: picked at sim/model
    1.15, 21% slower), and the simulator finds them at most 1.4% faster for LayerNorm,
    2.7% for RMSNorm (docs/model.md, Known gaps)."""
    body = buffered.program.body
    index = {id(op): i for i, op in enumerate(accesses(body))}
    return tuple(
        index[id(op)]
        for loop in walk(body)
        if isinstance(loop, ForLoop) and any(isinstance(op, Store) for op in loop.body)
        for op in loop.body
        if isinstance(op, Load)
    )


def late_loads(buffered: BufferedProgram) -> tuple[int, ...]:
    """Access indices of the loads that, on the writer, let it store one wave late: the
    loads of the grid body's loops (GEMM's B, copied on NoC1), when the grid body ends
    with plain stores (a split reduction's gather or merge waits for the other cores, so
    its stores stay in order). A candidate whose split loads (`split`) are all among them
    always has a `__sl` twin when they multicast: the chooser deals them to both engines."""
    body = buffered.program.body
    if not any(isinstance(op, Store) for op in body):
        return ()
    if any(isinstance(op, (Gather, If)) for op in body):
        return ()
    grid = {id(op) for op in body}
    return tuple(
        i for i, op in enumerate(accesses(body)) if isinstance(op, Load) and id(op) not in grid
    )


def _allocation_mates(buffered: BufferedProgram, moved: set[int]) -> set[int]:
    """`moved` and every other load into an allocation one of them fills. A circular
    buffer has one producer, so the lowering gives an allocation the engine of its first
    load (`loom.lower.engines`): a looped row's store-pass load that shares its buffer
    with the statistics pass (RMSNorm + residual's `res` in the shared plan) moves to the
    reader only with the first pass's load, or the variant would be charged a reader the
    program lacks. In the plan that loads apart (`build_buffers(apart=True)`) the store
    pass's `res` has a buffer of its own and moves alone."""
    allocation = buffered.load_allocations()
    shared = {allocation[i] for i in moved if i in allocation}
    return moved | {i for i, a in allocation.items() if a in shared}


def _with_engines(candidate: Candidate, engines: dict[int, str], name: str = "") -> Candidate:
    copies = tuple(
        replace(c, engine=engines[c.op]) if c.op in engines else c for c in candidate.copies
    )
    return replace(candidate, copies=copies, name=name or candidate.name)
