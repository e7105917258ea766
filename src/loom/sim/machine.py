"""The simulated chip: scheduler, fluid network, leg builder and bookkeeping.

:class:`Machine` is what statement handlers and microbenchmarks talk to. It starts legs
(flows followed by a latency), counts the bytes they move, and records, when tracing,
the per-resource load over time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.sim.engine import PENDING, Process, Request, Scheduler
from loom.sim.network import Flow, FluidNetwork
from loom.sim.params import SimParams
from loom.sim.topology import Topology
from loom.sim.transfers import Leg, LegBuilder


class Machine:
    def __init__(self, params: SimParams, *, trace: bool = False) -> None:
        self.params = params
        self.topo = Topology(params)
        self.load_samples: list[tuple[float, np.ndarray]] | None = [] if trace else None
        self.net = FluidNetwork(self.topo.capacity, self._sample if trace else None)
        self.sched = Scheduler(self.net)
        self.legs = LegBuilder(self.topo, params)
        self.bytes: dict[str, float] = {}
        self.trace = trace

    def _sample(self, t: float, load: np.ndarray) -> None:
        assert self.load_samples is not None
        self.load_samples.append((t, load))

    def start_legs(self, legs: Sequence[Leg], on_done: Callable[[], None]) -> None:
        """Start every leg now; call `on_done` when the last one's latency has passed."""
        sched = self.sched
        if not legs:
            sched.at(sched.now, lambda _: on_done())
            return
        if len(legs) == 1:  # the common case: no count of legs still going
            self.start_leg(legs[0], on_done)
            return
        pending = [len(legs)]

        def leg_done() -> None:
            pending[0] -= 1
            if pending[0] == 0:
                on_done()

        for leg in legs:
            self.start_leg(leg, leg_done)

    def start_leg(self, leg: Leg, leg_done: Callable[[], None]) -> None:
        """Count the leg's bytes and start its flow; `leg_done` runs `latency` after the
        flow has moved its last byte (at once plus latency when it has none)."""
        sched = self.sched
        moved = self.bytes
        moved[leg.category] = moved.get(leg.category, 0.0) + leg.nbytes
        key = _DELIVERED[leg.category]
        moved[key] = moved.get(key, 0.0) + leg.delivered
        latency = leg.latency
        if leg.nbytes <= 0.0:
            sched.at(sched.now + latency, _call, leg_done)
            return

        def flow_done() -> None:
            sched.at(sched.now + latency, _call, leg_done)

        self.net.add(sched.now, Flow(leg.nbytes, leg.cap, leg.res, leg.w, flow_done))


_DELIVERED = {
    c: c + "_delivered" for c in ("dram_read", "dram_write", "noc_unicast", "noc_multicast")
}
"""The delivered-bytes counter of each bytes-moved bucket."""


def _call(fn: Callable[[], None]) -> None:
    fn()


class Transfer(Request):
    """A blocking copy: start the legs, resume the process when all have finished."""

    __slots__ = ("legs", "machine", "what")

    def __init__(self, machine: Machine, legs: Sequence[Leg], what: str) -> None:
        self.machine = machine
        self.legs = legs
        self.what = what

    def start(self, sched: Scheduler, proc: Process) -> Any:
        t0 = sched.now

        def done() -> None:
            proc.record(t0, sched.now, self.what)
            sched.resume(proc)

        legs = self.legs
        if len(legs) == 1:  # start_legs' common case, without its call
            self.machine.start_leg(legs[0], done)
        else:
            self.machine.start_legs(legs, done)
        return PENDING
