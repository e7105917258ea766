"""Circular buffers: the back-pressure between the engines of a core.

A buffer of `depth` blocks counts blocks reserved by its producer, pushed (filled),
taken by its consumer and popped (freed). A reserve waits until fewer than `depth`
blocks are reserved and not yet popped; a wait waits until a pushed block has not yet
been taken. Several buffers can be waited for at once (all or nothing).
"""

from __future__ import annotations

from typing import Any

from loom.sim.engine import PENDING, Process, Request, Scheduler


class CircularBuffer:
    __slots__ = ("depth", "name", "popped", "pushed", "reserved", "taken", "waiters")

    def __init__(self, name: str, depth: int) -> None:
        self.name = name
        self.depth = depth
        self.reserved = 0
        self.pushed = 0
        self.taken = 0
        self.popped = 0
        self.waiters: list[tuple[Process, Request]] = []

    def can_reserve(self) -> bool:
        return self.reserved - self.popped < self.depth

    def can_take(self) -> bool:
        return self.pushed > self.taken

    def push(self, sched: Scheduler) -> None:
        self.pushed += 1
        if self.waiters:
            self.wake(sched)

    def pop(self, sched: Scheduler) -> None:
        self.popped += 1
        if self.waiters:
            self.wake(sched)

    def wake(self, sched: Scheduler) -> None:
        """Retry every waiter's request now (after the event being handled)."""
        waiters, self.waiters = self.waiters, []
        for proc, req in waiters:
            sched.at(sched.now, _retry, (sched, proc, req))

    def why_reserve(self) -> str:
        return f"waits to reserve a free block of {self.state()}"

    def why_take(self) -> str:
        return f"waits for a filled block of {self.state()}"

    def state(self) -> str:
        held, filled = self.reserved - self.popped, self.pushed - self.taken
        return f"'{self.name}' (depth {self.depth}, {held} in use, {filled} filled)"


def _retry(arg: tuple[Scheduler, Process, Request]) -> None:
    sched, proc, req = arg
    value = req.start(sched, proc)
    if value is not PENDING:
        sched.resume(proc, value)


class ReserveBlock(Request):
    """Producer: take a free block (resumes when one is popped)."""

    __slots__ = ("cb",)

    def __init__(self, cb: CircularBuffer) -> None:
        self.cb = cb

    def start(self, sched: Scheduler, proc: Process) -> Any:
        cb = self.cb
        if cb.reserved - cb.popped < cb.depth:  # can_reserve(), inlined: a hot path
            cb.reserved += 1
            return None
        proc.waiting = cb.why_reserve
        cb.waiters.append((proc, self))
        return PENDING


class TakeBlocks(Request):
    """Consumer: take one filled block of every buffer, all at once."""

    __slots__ = ("cbs",)

    def __init__(self, cbs: tuple[CircularBuffer, ...]) -> None:
        self.cbs = cbs

    def start(self, sched: Scheduler, proc: Process) -> Any:
        for cb in self.cbs:
            if cb.pushed <= cb.taken:  # not can_take(), inlined: a hot path
                proc.waiting = cb.why_take
                cb.waiters.append((proc, self))
                return PENDING
        for cb in self.cbs:
            cb.taken += 1
        return None
