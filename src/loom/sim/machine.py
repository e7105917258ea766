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
        pending = [len(legs)]

        def leg_done() -> None:
            pending[0] -= 1
            if pending[0] == 0:
                on_done()

        if not legs:
            sched.at(sched.now, lambda _: on_done())
            return
        for leg in legs:
            self.bytes[leg.category] = self.bytes.get(leg.category, 0.0) + leg.nbytes
            key = leg.category + "_delivered"
            self.bytes[key] = self.bytes.get(key, 0.0) + leg.delivered
            if leg.nbytes <= 0.0:
                sched.at(sched.now + leg.latency, lambda _: leg_done())
                continue
            latency = leg.latency

            def flow_done(lat: float = latency) -> None:
                sched.at(sched.now + lat, lambda _: leg_done())

            self.net.add(sched.now, Flow(leg.nbytes, leg.cap, leg.res, leg.w, flow_done))


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

        self.machine.start_legs(self.legs, done)
        return PENDING
