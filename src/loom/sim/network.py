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

from loom.sim.fill_jit import REL_EPS, compiled_filling


class Flow:
    """`nbytes` to move through resources `res` with usage weights `w`, at most `cap`."""

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
    """Active flows, their max-min fair rates, and the bytes each resource carried."""

    def __init__(
        self, capacity: np.ndarray, on_rates: Callable[[float, np.ndarray], None] | None = None
    ) -> None:
        self.capacity = capacity
        self.time = 0.0
        self.flows: list[Flow] = []
        self.dirty = False
        self.load = np.zeros_like(capacity)
        self.carried = np.zeros_like(capacity)
        self.solves = 0
        self._next: float | None = None
        """next_completion()'s answer, kept while neither the flows nor the time move."""
        self._fill = compiled_filling() or _rates_and_load
        """The compiled rate solve when Numba is there, else the NumPy one (same bits)."""
        self.on_rates = on_rates
        """Called after every re-solve with (time, per-resource load), for traces."""

    def add(self, now: float, flow: Flow) -> None:
        self.advance(now)
        if flow.remaining <= 0.0:
            raise ValueError("a flow must move at least one byte")
        self.flows.append(flow)
        self.dirty = True

    def advance(self, t: float) -> None:
        """Move every flow forward to time `t` at its current rate."""
        dt = t - self.time
        if dt <= 0.0:
            return
        for f in self.flows:
            f.remaining -= f.rate * dt
        self.carried += self.load * dt
        self.time = t
        self._next = None

    def next_completion(self) -> float:
        """Time at which the next flow finishes (re-solving rates if flows changed)."""
        if self.dirty:
            self._solve()
        elif self._next is not None:
            return self._next
        best = math.inf
        for f in self.flows:
            if f.rate > 0.0:
                t = f.remaining / f.rate
                if t < best:
                    best = t
        self._next = self.time + max(best, 0.0)
        return self._next

    def pop_done(self, t: float) -> list[Flow]:
        """Advance to `t` and remove the flows that have finished."""
        self.advance(t)
        done: list[Flow] = []
        kept: list[Flow] = []
        for f in self.flows:
            if f.remaining <= 1e-7 * f.nbytes + 1e-9:
                done.append(f)
            else:
                kept.append(f)
        if done:
            self.flows = kept
            self.dirty = True
        return done

    # ----- max-min fair rates ---------------------------------------------------------

    def _solve(self) -> None:
        self.dirty = False
        self._next = None
        self.solves += 1
        flows = self.flows
        if not flows:
            self.load = np.zeros_like(self.capacity)
            self._notify()
            return
        sizes = [f.res.size for f in flows]
        caps = np.array([f.cap for f in flows], dtype=np.float64)
        if sum(sizes) == 0:
            rates, load = caps, np.zeros_like(self.capacity)
        else:
            ent_res = np.concatenate([f.res for f in flows])
            ent_w = np.concatenate([f.w for f in flows])
            ent_f = np.repeat(np.arange(len(flows)), sizes)
            rates, load = self._fill(self.capacity, caps, ent_res, ent_w, ent_f)
        for f, r in zip(flows, rates.tolist(), strict=True):
            f.rate = r
        self.load = load
        self._notify()

    def _notify(self) -> None:
        if self.on_rates is not None:
            self.on_rates(self.time, self.load)


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
