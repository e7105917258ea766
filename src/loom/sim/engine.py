"""Discrete-event core: a time-ordered event heap, the fluid network, and processes.

Each core engine (reader, compute, writer) is a *process*: a generator that yields
requests. A request either completes at once (its value is sent straight back) or
returns :data:`PENDING` after arranging for :meth:`Scheduler.resume` to be called later.
Busy time is what a process spends in delays and transfers; time spent waiting for a
buffer or a peer is a stall.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Generator
from typing import Any

from loom.sim.network import FluidNetwork

PENDING = object()
"""Returned by a request that has suspended its process."""

ProcGen = Generator["Request", Any, None]


class Request:
    """Something a process asks of the machine; see :meth:`start`."""

    __slots__ = ()

    def start(self, sched: Scheduler, proc: Process) -> Any:
        """Do the request; return its value, or PENDING after arranging a resume."""
        raise NotImplementedError


class Process:
    """One engine of one core running its stream."""

    __slots__ = (
        "busy",
        "core",
        "engine",
        "finished",
        "frame",
        "gen",
        "intervals",
        "loops",
        "waiting",
    )

    def __init__(self, core: tuple[int, int], engine: str, gen: ProcGen) -> None:
        self.core = core
        self.engine = engine
        self.gen = gen
        self.busy = 0.0
        self.finished: float | None = None
        self.waiting: str | Callable[[], str] = ""
        """What the process is blocked on (for deadlock reports); empty when running. A
        callable is formatted only when a report needs it (blocking is frequent, reports
        rare)."""
        self.intervals: list[tuple[float, float, str, str]] | None = None
        """(start, end, what, loops) of each busy interval when tracing; `loops` names the
        loops around the statement, outermost first, joined by '>'."""
        self.loops: list[str] = []
        """The running stream's loop variables (shared with its frame)."""
        self.frame: Any = None
        """The interpreter's frame of the stream (block stack, buffers), kept so that
        state probes (loom.sim.periodicity) can read where the engine is."""

    def why(self) -> str:
        """What the process is blocked on, as text."""
        return self.waiting if isinstance(self.waiting, str) else self.waiting()

    @property
    def label(self) -> str:
        return f"core ({self.core[0]},{self.core[1]}) {self.engine}"

    def record(self, start: float, end: float, what: str) -> None:
        self.busy += end - start
        if self.intervals is not None and end > start:
            self.record_interval(start, end, what)

    def record_interval(self, start: float, end: float, what: str) -> None:
        """Keep a busy interval for the trace."""
        assert self.intervals is not None
        self.intervals.append((start, end, what, ">".join(self.loops)))


class Scheduler:
    """The event loop: heap events and flow completions in time order."""

    def __init__(self, net: FluidNetwork) -> None:
        self.now = 0.0
        self.net = net
        self._heap: list[tuple[float, int, Callable[[Any], None], Any]] = []
        self._seq = 0
        self.events = 0
        self.processes: list[Process] = []

    def at(self, t: float, fn: Callable[[Any], None], arg: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, fn, arg))

    def spawn(self, proc: Process) -> None:
        self.processes.append(proc)
        self.at(0.0, self.resume, proc)

    def resume(self, proc: Process, value: Any = None) -> None:
        """Run `proc` until it blocks or ends."""
        proc.waiting = ""
        gen = proc.gen
        while True:
            try:
                req = gen.send(value)
            except StopIteration:
                proc.finished = self.now
                return
            value = req.start(self, proc)
            if value is PENDING:
                return

    def wake(self, proc: Process, value: Any = None) -> None:
        """Resume `proc` at the current time, after the event being handled."""
        self.at(self.now, _resume_with, (self, proc, value))

    def run(self) -> None:
        heap, net = self._heap, self.net
        pop, inf = heapq.heappop, math.inf
        while True:
            now = self.now
            while heap and heap[0][0] <= now:  # handlers see self.now; it does not move
                _, _, fn, arg = pop(heap)
                self.events += 1
                fn(arg)
            t_net = net.next_completion() if net.active else inf
            t_heap = heap[0][0] if heap else inf
            if t_net == inf and t_heap == inf:
                return
            if t_net <= t_heap:
                self.now = max(now, t_net)
                for flow in net.pop_done(self.now):
                    self.events += 1
                    flow.on_done()
            else:
                self.now = t_heap


def _resume_with(arg: tuple[Scheduler, Process, Any]) -> None:
    sched, proc, value = arg
    sched.resume(proc, value)


class Delay(Request):
    """Keep the engine busy for `cycles` (compute, fixed costs)."""

    __slots__ = ("cycles", "what")

    def __init__(self, cycles: float, what: str) -> None:
        self.cycles = cycles
        self.what = what

    def start(self, sched: Scheduler, proc: Process) -> Any:
        cycles = self.cycles
        if cycles <= 0.0:
            return None
        now = sched.now
        end = now + cycles
        proc.busy += end - now  # Process.record, inlined: the most frequent request
        if proc.intervals is not None and end > now:
            proc.record_interval(now, end, self.what)
        sched.at(end, sched.resume, proc)
        return PENDING
