"""Which data-movement engine issues each load, given the schedule's multicast groups.

The buffer plan (`loom.dataflow.spread_loads`) alternates the loads of each pipe scope
between the reader (NoC0) and the writer (NoC1), and the latency model charges both
engines alike, so swapping the engines of a scope's loads costs the same there. On the
chip it does not: a DRAM read's response travels the requesting engine's NoC in
dimension order, and its last leg runs along the requester's *column* on NoC0 (east,
then south) and along its *row* on NoC1 (north, then west). The cores that read a
multicast load (one sender per group) line up; if many senders of one load share a
column and read on NoC0, or share a row and read on NoC1, all their reads queue on the
same links. So, per scope, the loads are dealt to the engines in whichever of the two
orders puts fewer senders on one last leg; ties keep the plan's order.
"""

from __future__ import annotations

from dataclasses import replace

from loom.ir.buffers import BufferedProgram
from loom.ir.schedule import Copy, Schedule
from loom.ir.tile import Load, accesses


def _senders_per_leg(copy: Copy, cores: tuple[int, int]) -> tuple[int, int]:
    """(senders sharing one column, senders sharing one row) of this load's reads."""
    (cy, cx), (ay, ax) = cores, copy.area
    return max(cy // ay, 1), max(cx // ax, 1)


def assign_load_engines(buffered: BufferedProgram, schedule: Schedule) -> BufferedProgram:
    """The buffer plan with each scope's pair of loads on the cheaper engine order."""
    cores = (schedule.mapping.cores_y, schedule.mapping.cores_x)
    by_index = {c.op: c for c in schedule.copies}
    owner = {b: a.name for a in buffered.allocations for b in a.buffers}
    legs: dict[str, tuple[int, int]] = {}
    for i, op in enumerate(accesses(buffered.program.body)):
        vb = buffered.buffer_of(op.result.name) if isinstance(op, Load) else None
        if vb is not None and vb.role == "load" and i in by_index:
            column, row = _senders_per_leg(by_index[i], cores)
            old = legs.get(owner[vb.name], (0, 0))
            legs[owner[vb.name]] = (max(old[0], column), max(old[1], row))
    engine = {owner[vb.name]: vb.producer for vb in buffered.buffers if vb.name in owner}
    scopes: dict[str, list[str]] = {}
    for alloc in buffered.allocations:
        if alloc.name in legs:
            scopes.setdefault(alloc.scope, []).append(alloc.name)
    swap: set[str] = set()
    for names in scopes.values():
        if sorted(engine[n] for n in names) != ["reader", "writer"]:
            continue  # only a reader/writer pair can trade places at no cost to the model
        on_reader, on_writer = sorted(names, key=lambda n: engine[n] != "reader")
        kept = max(legs[on_reader][0], legs[on_writer][1])
        swapped = max(legs[on_writer][0], legs[on_reader][1])
        if swapped < kept:
            swap.update(names)
    if not swap:
        return buffered
    other = {"reader": "writer", "writer": "reader"}
    buffers = tuple(
        replace(vb, producer=other[vb.producer]) if owner.get(vb.name) in swap else vb
        for vb in buffered.buffers
    )
    return replace(buffered, buffers=buffers)
