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

import math
from collections.abc import Callable

import numpy as np

from loom.sim.fill_jit import REL_EPS, compiled_fill_into
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
        """Each resource's load at the current rates (kept, and rewritten where the
        flows are, by each solve)."""
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
        fill = compiled_fill_into()
        self._fill = fill or _fill_into
        """The compiled rate solve when Numba is there, else the NumPy one (same bits)."""
        self._ops = NUMPY_OPS if fill is None else compiled_ops()
        """Advance, next finish and drop finished flows, compiled or not with the solve."""
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
        self.advance(now)
        if flow.remaining <= 0.0:
            raise ValueError("a flow must move at least one byte")
        i, e, k = self.active, self._ne, flow.res.size
        if i == self._cap.size:
            self._grow_flows()
        while e + k > self._ent_res.size:
            self._grow_entries()
        self._cap[i] = flow.cap
        self._rem[i] = flow.remaining
        self._rate[i] = 0.0
        self._nbytes[i] = flow.nbytes
        self._ent_res[e : e + k] = flow.res
        self._ent_w[e : e + k] = flow.w
        self._ent_f[e : e + k] = i
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

    def advance(self, t: float) -> None:
        """Move every flow forward to time `t` at its current rate."""
        dt = t - self.time
        if dt <= 0.0:
            return
        self._ops.advance(
            self._rem, self._rate, self.active, self.carried, self.load, self._used, self._nused, dt
        )
        self.time = t
        self._next = None

    def next_completion(self) -> float:
        """Time at which the next flow finishes (re-solving rates if flows changed)."""
        if self.dirty:
            self._solve()
        elif self._next is not None:
            return self._next
        best = self._ops.earliest(self._rem, self._rate, self.active)
        self._next = self.time + max(best, 0.0)
        return self._next

    def pop_done(self, t: float) -> list[Flow]:
        """Advance to `t` and remove the flows that have finished (in the order added)."""
        self.advance(t)
        self.active, self._ne, count = self._ops.pop(
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
        if not count:
            return []
        gone = self._done[:count].tolist()
        flows = self._flows
        done = [flows[i] for i in gone]
        for i in reversed(gone):
            del flows[i]
        self.dirty = True
        return done

    # ----- max-min fair rates ---------------------------------------------------------

    def _solve(self) -> None:
        self.dirty = False
        self._next = None
        self.solves += 1
        n, ne = self.active, self._ne
        if not n or not ne:
            self._rate[:n] = self._cap[:n]
            self.load[self._used[: self._nused]] = 0.0
            self._nused = 0
        else:  # the whole arrays and their live lengths: no views made per solve
            self._nused = self._fill(
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
            )
        if self.on_rates is not None:  # a copy: the solves rewrite `load` in place
            self.on_rates(self.time, self.load.copy())


def _fill_into(
    capacity: np.ndarray,
    caps: np.ndarray,
    n: int,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    ne: int,
    rates: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    place: np.ndarray,
) -> int:
    """loom.sim.fill_jit.fill_into with NumPy: the same arguments, effects and bits."""
    load[used[:nused]] = 0.0
    rates[:n], new = _rates_and_load(capacity, caps[:n], ent_res[:ne], ent_w[:ne], ent_f[:ne])
    support = np.unique(ent_res[:ne])
    used[: len(support)] = support
    load[support] = new[support]
    return len(support)


def _rates_and_load(
    capacity: np.ndarray,
    caps: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Fair rates and each resource's load, with NumPy (the compiled kernel's twin)."""
    rates = _progressive_filling(capacity, caps, ent_res, ent_w, ent_f)
    load = np.bincount(ent_res, weights=ent_w * rates[ent_f], minlength=len(capacity))
    return rates, load


def _progressive_filling(
    capacity: np.ndarray,
    caps: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
) -> np.ndarray:
    """Max-min fair rates of flows with weighted resource usage and individual caps.

    Each round drops the entries of the flows it froze, so later rounds sum fewer
    entries; a resource's usage is still summed over its remaining entries in entry
    order (bincount), which keeps every rate bit for bit what summing with a mask gives
    (tests/sim/test_sim_network.py checks against that reference)."""
    n = len(caps)
    m = len(capacity)
    rates = np.zeros(n)
    frozen = np.zeros(n, dtype=bool)
    residual = capacity.astype(np.float64, copy=True)
    tol = capacity * REL_EPS
    uw = np.bincount(ent_res, weights=ent_w, minlength=m)
    level = 0.0
    left = n
    while True:
        used = uw > 0.0
        uw_used = uw[used]
        d_res = float((residual[used] / uw_used).min()) if len(uw_used) else math.inf
        d_cap = float(caps[~frozen].min()) - level  # rounding is monotonic: min(c) - l
        step = max(min(d_res, d_cap), 0.0)
        level += step
        residual -= uw * step
        newly = caps <= level * (1 + REL_EPS)
        newly &= ~frozen
        saturated = residual <= tol
        saturated &= used
        if saturated.any():
            newly[ent_f[saturated[ent_res]]] = True
        count = int(np.count_nonzero(newly))
        if count == 0:  # numerical corner: freeze the most constrained flows
            newly, count = ~frozen, left
        rates[newly] = np.minimum(caps[newly], level)
        frozen |= newly
        left -= count
        if not left:
            return rates
        keep = ~frozen[ent_f]
        ent_res, ent_w, ent_f = ent_res[keep], ent_w[keep], ent_f[keep]
        uw = np.bincount(ent_res, weights=ent_w, minlength=m)
