"""Which data-movement engine issues each load of a candidate (decided once, here).

The buffer plan (`loom.dataflow.spread_loads`) deals the load allocations of each pipe
scope to the reader (NoC0) and the writer (NoC1) in turn. Which of the two gets which
operand matters on the chip: a DRAM response travels the requesting engine's NoC, a
multicast leaves from the corner where that NoC enters its group, and the two NoCs route
in opposite directions, so the same loads load different links (`loom.arch.noc`). For
every scope with two load allocations, the plan's order, the two traded and, when the two
are interchangeable blocks (flash attention's K and V), both on one engine are compared
by the busiest link of each NoC (the loads of a scope stream at once) and the lightest
is kept (ties keep the plan's; `loom.arch.noc.choose_load_engines`). The choice is written
on the candidate's copies: the latency model charges it and the lowering realizes it.
"""

from __future__ import annotations

from dataclasses import replace

from loom.arch import Arch
from loom.arch.noc import choose_load_engines
from loom.ir.buffers import BufferedProgram
from loom.ir.candidate import Candidate


def assign_engines(buffered: BufferedProgram, candidate: Candidate, arch: Arch) -> Candidate:
    """`candidate` with every load copy's engine set."""
    cores = (candidate.mapping.cores_y, candidate.mapping.cores_x)
    plans = {c.op: (c.mode, c.area) for c in candidate.copies}
    engines = choose_load_engines(buffered, cores, plans, arch)
    copies = tuple(
        replace(c, engine=engines[c.op]) if c.op in engines else c for c in candidate.copies
    )
    return replace(candidate, copies=copies)
