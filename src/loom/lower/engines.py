"""Give each load buffer the data-movement engine its schedule's copy names.

The engine of every load is chosen once, by the mapping stage, from the NoC link loads
of the two possible orders (`loom.mapping.engines`); the latency model charges that
choice and the schedule carries it (`Copy.engine`). Here the buffer plan is brought in
line: every buffer of an allocation whose load the schedule gives to the other engine
moves with it (a circular buffer has a single producer). A hand-written schedule whose
copies name no engine gets the same choice, made by the same function.
"""

from __future__ import annotations

from dataclasses import replace

from loom.arch import Arch
from loom.arch.noc import choose_load_engines
from loom.ir.buffers import BufferedProgram
from loom.ir.schedule import Schedule


def assign_load_engines(
    buffered: BufferedProgram, schedule: Schedule, arch: Arch
) -> BufferedProgram:
    """The buffer plan with each load allocation on the engine the schedule names."""
    by_index = {c.op: c for c in schedule.copies}
    chosen = {c.op: c.engine for c in schedule.copies if c.engine}
    if not chosen:
        cores = (schedule.mapping.cores_y, schedule.mapping.cores_x)
        plans = {c.op: (c.mode, c.area) for c in schedule.copies}
        chosen = choose_load_engines(buffered, cores, plans, arch)
    owner = {b: a.name for a in buffered.allocations for b in a.buffers}
    wanted: dict[str, str] = {}
    for i, allocation in buffered.load_allocations().items():
        if i in by_index and chosen.get(i):
            wanted.setdefault(allocation, chosen[i])
    if not wanted:
        return buffered
    buffers = tuple(
        replace(vb, producer=wanted[owner.get(vb.name, vb.name)])
        if vb.role == "load" and owner.get(vb.name, vb.name) in wanted
        else vb
        for vb in buffered.buffers
    )
    return replace(buffered, buffers=buffers)
