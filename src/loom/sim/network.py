"""Flow-level (fluid) model of bandwidth sharing.

A transfer is a *flow*: bytes that move at a rate through weighted resources (a NoC link
carries every byte of a unicast flow once, a DRAM bank a fraction of an interleaved read).
Rates are max-min fair, found by progressive filling: all unfrozen flows rise together
until a resource saturates or a flow reaches its own cap (packet-size bandwidth, issue
rate, per-core engine limits); those flows freeze and the rest keep rising. Rates only
change when a flow starts or ends, so the simulator re-solves at those instants only,
once per instant however many flows changed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from loom.sim.fill_jit import compiled_fill_into
from loom.sim.flow_ops import NUMPY_OPS, compiled_ops


class Flow:
    """`nbytes` to move through resources `res` with usage weights `w`, at most `cap`.

    While the flow is in a network its progress lives in the network's arrays;
    `remaining` and `rate` are written back when :attr:`FluidNetwork.flows` is read."""

    __slots__ = ("cap", "nbytes", "on_done", "rate", "remaining", "res", "w")

    def __init__(
        self, nbytes: float, cap: float, res: np.ndarray, w: np.ndarray, on_done: Callable[[], None]
    ) -> None:
        self.nbytes = float(nbytes)
        self.remaining = float(nbytes)
        self.cap = float(cap)
        self.res = res
        self.w = w
        self.rate = 0.0
        self.on_done = on_done


class FluidNetwork:
    """Active flows, their max-min fair rates, and the bytes each resource carried.

    The active flows are kept as arrays (one slot per flow, in the order the flows were
    added) and their resource usage as one incidence list (entries in flow order), both
    updated when a flow starts or ends rather than rebuilt at every rate solve: the solve
    then hands views of them to the filling kernel. The entry order is the order of the
    old per-solve concatenation, so every sum, and every rate, has the same bits."""

    def __init__(
        self, capacity: np.ndarray, on_rates: Callable[[float, np.ndarray], None] | None = None
    ) -> None:
        self.capacity = capacity
        self.time = 0.0
        self.dirty = False
        self.load = np.zeros_like(capacity)
        """Each resource's load at the current rates (kept, rewritten where the flows
        are by each solve, and zeroed when the last flow ends)."""
        self._used = np.zeros(capacity.size, dtype=np.int64)
        self._nused = 0
        """The resources the flows of the last solve use (`_used[:_nused]`): the only
        ones with load, so the only ones whose carried bytes advancing moves."""
        self._place = np.full(capacity.size, -1, dtype=np.int64)
        """The compiled solve's scratch (all -1 between solves)."""
        self.carried = np.zeros_like(capacity)
        self.solves = 0
        self._next: float | None = None
        """next_completion()'s answer, kept while neither the flows nor the time move."""
        self._ops = NUMPY_OPS if compiled_fill_into() is None else compiled_ops()
        """The rate solve and the per-event array work, compiled when Numba is there,
        else with NumPy (the same bits)."""
        self.on_rates = on_rates
        """Called after every re-solve with (time, per-resource load), for traces."""
        self._flows: list[Flow] = []
        """The active flows, slot i of the arrays below being flow i."""
        self.active = 0
        """How many flows are moving (slots 0..active-1 of the arrays below); a plain
        attribute, read at every step of the event loop."""
        self._ne = 0
        self._cap = np.zeros(64)
        self._rem = np.zeros(64)
        self._rate = np.zeros(64)
        self._nbytes = np.zeros(64)
        self._ent_res = np.zeros(1024, dtype=np.int64)
        self._ent_w = np.zeros(1024)
        self._ent_f = np.zeros(1024, dtype=np.int64)
        self._done = np.zeros(64, dtype=np.int64)

    @property
    def flows(self) -> list[Flow]:
        """The active flows, their `remaining` and `rate` brought up to date (probes,
        tests; the simulation itself reads the arrays)."""
        rem, rate = self._rem[: self.active].tolist(), self._rate[: self.active].tolist()
        for f, r, x in zip(self._flows, rem, rate, strict=True):
            f.remaining, f.rate = r, x
        return list(self._flows)

    def add(self, now: float, flow: Flow) -> None:
        """Advance to `now` and start `flow` (one compiled step)."""
        if flow.remaining <= 0.0:
            raise ValueError("a flow must move at least one byte")
        i, e, k = self.active, self._ne, flow.res.size
        if i == self._cap.size:
            self._grow_flows()
        while e + k > self._ent_res.size:
            self._grow_entries()
        dt = now - self.time
        self._ops.put(
            self._rem,
            self._rate,
            i,
            self.carried,
            self.load,
            self._used,
            self._nused,
            dt,
            self._cap,
            self._nbytes,
            self._ent_res,
            self._ent_w,
            self._ent_f,
            e,
            flow.cap,
            flow.remaining,
            flow.nbytes,
            flow.res,
            flow.w,
        )
        if dt > 0.0:
            self.time = now
            self._next = None
        self.active, self._ne = i + 1, e + k
        self._flows.append(flow)
        self.dirty = True

    def _grow_flows(self) -> None:
        self._cap, self._rem, self._rate, self._nbytes, self._done = (
            np.concatenate([a, np.zeros_like(a)])
            for a in (self._cap, self._rem, self._rate, self._nbytes, self._done)
        )

    def _grow_entries(self) -> None:
        self._ent_res, self._ent_w, self._ent_f = (
            np.concatenate([a, np.zeros_like(a)]) for a in (self._ent_res, self._ent_w, self._ent_f)
        )

    def next_completion(self) -> float:
        """Time at which the next flow finishes (re-solving rates if flows changed)."""
        if self.dirty:
            best = self._solve()
        elif self._next is not None:
            return self._next
        else:
            best = self._ops.earliest(self._rem, self._rate, self.active)
        self._next = self.time + max(best, 0.0)
        return self._next

    def pop_done(self, t: float) -> list[Flow]:
        """Advance to `t` and remove the flows that have finished (in the order added;
        one compiled step)."""
        dt = t - self.time
        self.active, self._ne, count = self._ops.advance_pop(
            dt,
            self.carried,
            self.load,
            self._used,
            self._nused,
            self.active,
            self._ne,
            self._cap,
            self._rem,
            self._rate,
            self._nbytes,
            self._ent_res,
            self._ent_w,
            self._ent_f,
            self._done,
        )
        if dt > 0.0:
            self.time = t
            self._next = None
        if not count:
            return []
        gone = self._done[:count].tolist()
        flows = self._flows
        done = [flows[i] for i in gone]
        for i in reversed(gone):
            del flows[i]
        self.dirty = True
        if not self.active:  # no flow left: no load (the scheduler solves only while
            # flows move, so the last solve's load would stay, and the next flow's start
            # would advance it over the idle gap: bytes that no flow moved)
            self._drop_load()
            if self.on_rates is not None:
                self.on_rates(self.time, self.load.copy())
        return done

    def _drop_load(self) -> None:
        """Zero the load where the last solve put it."""
        self.load[self._used[: self._nused]] = 0.0
        self._nused = 0

    # ----- max-min fair rates ---------------------------------------------------------

    def _solve(self) -> float:
        """Re-solve the rates; returns the time until the first flow finishes."""
        self.dirty = False
        self._next = None
        self.solves += 1
        n, ne = self.active, self._ne
        if not n or not ne:
            self._rate[:n] = self._cap[:n]
            self._drop_load()
            best = self._ops.earliest(self._rem, self._rate, n)
        else:  # the whole arrays and their live lengths: no views made per solve
            self._nused, best = self._ops.settle(
                self.capacity,
                self._cap,
                n,
                self._ent_res,
                self._ent_w,
                self._ent_f,
                ne,
                self._rate,
                self.load,
                self._used,
                self._nused,
                self._place,
                self._rem,
            )
        if self.on_rates is not None:  # a copy: the solves rewrite `load` in place
            self.on_rates(self.time, self.load.copy())
        return float(best)
