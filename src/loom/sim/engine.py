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
from collections import deque
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


class _Suspended(Request):
    """What a process yields once it has arranged its own resume (a generated stream's
    inline delay, loom.sim.streamgen)."""

    __slots__ = ()

    def start(self, sched: Scheduler, proc: Process) -> Any:
        return PENDING


SUSPENDED = _Suspended()


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


Event = tuple[int, Callable[[Any], None], Any]
"""(sequence number, handler, argument) of a scheduled call."""


class Scheduler:
    """The event loop: scheduled calls and flow completions in time order.

    Calls run in order of (time, order of scheduling). They are kept per time, in
    scheduling order, with a heap of the distinct times: many calls share a time (every
    wake-up is for the current cycle, engines finish equal delays together), and a call
    for a time already pending costs an append instead of a heap push and pop."""

    def __init__(self, net: FluidNetwork) -> None:
        self.now = 0.0
        self.net = net
        self._times: list[float] = []
        """Heap of the distinct times of pending calls."""
        self._due: dict[float, deque[Event]] = {}
        """The pending calls of each time, in scheduling order."""
        self._seq = 0
        self.events = 0
        self.processes: list[Process] = []

    def at(self, t: float, fn: Callable[[Any], None], arg: Any = None) -> None:
        self._seq += 1
        due = self._due.get(t)
        if due is None:
            self._due[t] = deque(((self._seq, fn, arg),))
            heapq.heappush(self._times, t)
        else:
            due.append((self._seq, fn, arg))

    def pending(self) -> list[tuple[float, int, Callable[[Any], None], Any]]:
        """Every pending call as (time, sequence number, handler, argument), unordered
        (state probes)."""
        return [(t, seq, fn, arg) for t, due in self._due.items() for seq, fn, arg in due]

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
            if req is SUSPENDED:  # its start would return PENDING; no call needed
                return
            value = req.start(self, proc)
            if value is PENDING:
                return

    def wake(self, proc: Process, value: Any = None) -> None:
        """Resume `proc` at the current time, after the event being handled."""
        self.at(self.now, _resume_with, (self, proc, value))

    def run(self) -> None:
        times, due, net = self._times, self._due, self.net
        pop, inf = heapq.heappop, math.inf
        while True:
            now = self.now
            while times and times[0] <= now:  # handlers see self.now; it does not move
                t = times[0]
                calls = due[t]
                while calls:  # calls for `t` made meanwhile join the end
                    _, fn, arg = calls.popleft()
                    self.events += 1
                    fn(arg)
                    if times[0] != t:  # a call for an earlier time was made: it is next
                        break
                if not calls and times[0] == t:
                    pop(times)
                    del due[t]
            t_net = net.next_completion() if net.active else inf
            t_heap = times[0] if times else inf
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
