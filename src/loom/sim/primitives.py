"""Data-movement primitives below the Program level, for microbenchmarks.

TT-Metal's data-movement tests issue `count` transactions of `size` bytes and then wait
at one barrier; sizes need not be whole tiles. :func:`run_copies` runs such batches on the
same machine model as :func:`loom.sim.simulate` (same legs, links, banks and latencies),
one sequence of batches per engine, all engines starting together.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from loom.errors import SimulationError
from loom.sim.engine import Delay, Process, Request
from loom.sim.machine import Machine, Transfer
from loom.sim.params import SimParams
from loom.sim.topology import Core
from loom.sim.transfers import Leg, run_bank_counts

KINDS = ("write", "read", "dram_read", "dram_write", "multicast", "gather", "scatter")


@dataclass(frozen=True, slots=True)
class Copy:
    """`count` transactions of `size` bytes issued by `core`, then one barrier."""

    kind: str
    """write / read (core to core), dram_read / dram_write, multicast; gather / scatter:
    reads from / writes to every core of `dsts`, each transaction's `size` bytes split
    evenly over them, all issued together."""
    core: Core
    size: int
    count: int = 1
    peer: Core | None = None
    """The other core of a write (destination) or read (source)."""
    dsts: tuple[Core, ...] = ()
    """Receivers of a multicast."""
    noc: int = 0
    first_bank: int = 0
    """DRAM: bank of the first page; pages go round-robin over the banks..."""
    one_bank: bool = False
    """...unless every page is in `first_bank` (a bank-sharded buffer)."""
    linked: bool = True


def run_copies(
    params: SimParams, engines: Sequence[Sequence[Copy]], starts: Sequence[float] = ()
) -> tuple[float, ...]:
    """Finish cycle of each engine's sequence of copies; engine i starts at `starts[i]`
    (cycle 0 when `starts` is empty)."""
    machine = Machine(params)
    procs = []
    for i, copies in enumerate(engines):
        core = copies[0].core if copies else (0, 0)
        start = starts[i] if starts else 0.0
        proc = Process(core, f"engine {i}", _engine(machine, copies, start))
        machine.sched.spawn(proc)
        procs.append(proc)
    machine.sched.run()
    return tuple(p.finished or 0.0 for p in procs)


def _engine(
    machine: Machine, copies: Sequence[Copy], start: float
) -> Generator[Request, Any, None]:
    if start > 0.0:
        yield Delay(start, "start")
    for c in copies:
        yield Transfer(machine, legs_of(machine, c), c.kind)


def legs_of(machine: Machine, c: Copy) -> tuple[Leg, ...]:
    if c.kind not in ("gather", "scatter"):
        return (leg_of(machine, c),)
    if not c.dsts:
        raise SimulationError(f"a {c.kind} copy needs peer cores")
    part = c.size / len(c.dsts)
    make = machine.legs.read if c.kind == "gather" else machine.legs.write
    return tuple(make(c.noc, c.core, peer, part * c.count, part) for peer in c.dsts)


def leg_of(machine: Machine, c: Copy) -> Leg:
    legs = machine.legs
    nbytes = c.size * c.count
    if c.kind in ("dram_read", "dram_write"):
        n = machine.topo.n_banks
        if c.one_bank:
            counts = tuple(c.count if b == c.first_bank else 0 for b in range(n))
        else:
            counts = run_bank_counts(n, c.first_bank, c.count)
        return legs.dram(c.noc, c.core, counts, c.size, write=c.kind == "dram_write")
    if c.kind in ("write", "read"):
        if c.peer is None:
            raise SimulationError(f"a '{c.kind}' copy needs a peer core")
        make = legs.write if c.kind == "write" else legs.read
        return make(c.noc, c.core, c.peer, nbytes, c.size)
    if c.kind == "multicast":
        if not c.dsts:
            raise SimulationError("a multicast copy needs receivers")
        return legs.multicast(c.noc, c.core, c.dsts, nbytes, c.size, c.linked)
    raise SimulationError(f"unknown copy kind '{c.kind}'; use one of {', '.join(KINDS)}")
