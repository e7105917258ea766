"""The max-min fair rate solve compiled with Numba: the same arithmetic, without NumPy's
per-call overhead.

The NumPy progressive filling (loom.sim.fill_numpy.progressive_filling) makes some 25
array calls per round and a solve takes 4 to 5 rounds on the paper's workloads; with
~45 flows over ~200 resources each call is almost all dispatch, so a solve costs
~550,000 instructions and the rate solves are more than half of a flash attention or
flash decode simulation. This kernel does the same operations element by element, in
the same order: a resource's usage is summed over the unfrozen flows' entries in entry
order (what `np.bincount` does), the step is the smallest residual/usage ratio or cap
gap, the residuals drop by usage x step, and flows freeze when their cap is reached or
a resource they use saturates. Every rate is therefore bit for bit the NumPy one
(tests/sim/test_sim_network.py checks both against a reference).

Numba is optional: without it (or with LOOM_SIM_NO_JIT=1) the simulator uses the
NumPy version and gives the same numbers, only slower. The kernel is compiled on first
use and cached on disk.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np

REL_EPS = 1e-9
"""Relative tolerance of "saturated" and "at the level" in both rate solves."""

Filling = Callable[
    [np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]
]


def fill_into(  # noqa: C901 - one loop nest, compiled as one function
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
    """Max-min fair rates of flows 0..n-1 (entries 0..ne-1) into `rates`, and the load
    they put on each resource (summed in entry order, as `np.bincount` does) into
    `load`; loops only, so that Numba can compile it (see the module doc).

    The network calls this at every re-solve, so it allocates nothing of the chip's
    size: `load` is the previous solve's (its support, `used[:nused]`, is cleared
    first), `place` is all -1 and is left so. Only the resources some entry uses are
    visited (`used`, in order of first use, each entry knowing its resource's place
    `loc` there): a resource no flow uses has no usage, so it never bounds the step,
    never saturates and keeps its residual; a chip has ~1,000 resources and a solve's
    flows touch ~50 of them. Returns how many resources the flows use (the new
    support of `load`, in `used`)."""
    for j in range(nused):
        load[used[j]] = 0.0
    loc = np.empty(ne, dtype=np.int64)
    k = 0
    for e in range(ne):
        r = ent_res[e]
        if place[r] < 0:
            place[r] = k
            used[k] = r
            k += 1
        loc[e] = place[r]
    for j in range(k):
        place[used[j]] = -1
    residual = np.empty(k)
    tol = np.empty(k)
    for j in range(k):
        residual[j] = capacity[used[j]]
        tol[j] = capacity[used[j]] * REL_EPS
    uw = np.zeros(k)
    saturated = np.zeros(k, dtype=np.bool_)
    frozen = np.zeros(n, dtype=np.bool_)
    newly = np.zeros(n, dtype=np.bool_)
    # the unfrozen flows' entries, in entry order: rounds drop the entries of the flows
    # they froze (as the NumPy version does), so later rounds sum fewer
    act_f = ent_f[:ne].copy()
    act_w = ent_w[:ne].copy()
    na = ne
    level = 0.0
    left = n
    while left > 0:
        for j in range(k):
            uw[j] = 0.0
        for e in range(na):
            uw[loc[e]] += act_w[e]
        d_res = math.inf
        for j in range(k):
            if uw[j] > 0.0:
                d = residual[j] / uw[j]
                if d < d_res:
                    d_res = d
        min_cap = math.inf
        for i in range(n):
            if not frozen[i] and caps[i] < min_cap:
                min_cap = caps[i]
        d_cap = min_cap - level
        step = d_res if d_res < d_cap else d_cap
        if not step > 0.0:
            step = 0.0
        level += step
        any_saturated = False
        for j in range(k):
            residual[j] -= uw[j] * step
            saturated[j] = uw[j] > 0.0 and residual[j] <= tol[j]
            if saturated[j]:
                any_saturated = True
        threshold = level * (1 + REL_EPS)
        for i in range(n):
            newly[i] = not frozen[i] and caps[i] <= threshold
        if any_saturated:
            for e in range(na):
                if saturated[loc[e]]:
                    newly[act_f[e]] = True
        count = 0
        for i in range(n):
            if newly[i]:
                count += 1
        if count == 0:  # numerical corner: freeze the most constrained flows
            for i in range(n):
                newly[i] = not frozen[i]
            count = left
        for i in range(n):
            if newly[i]:
                rates[i] = caps[i] if caps[i] < level else level
                frozen[i] = True
        left -= count
        kept = 0
        for e in range(na):
            if not frozen[act_f[e]]:
                loc[kept] = loc[e]
                act_w[kept] = act_w[e]
                act_f[kept] = act_f[e]
                kept += 1
        na = kept
    for e in range(ne):
        load[ent_res[e]] += ent_w[e] * rates[ent_f[e]]
    return k


FillInto = Callable[..., int]


def filling(core: FillInto) -> Filling:
    """`core` as a pure function of the flows: (rates, load) in new arrays (tests,
    benchmarks; the network calls the core with its own arrays)."""

    def fill(
        capacity: np.ndarray,
        caps: np.ndarray,
        ent_res: np.ndarray,
        ent_w: np.ndarray,
        ent_f: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        m, n = capacity.shape[0], caps.shape[0]
        rates, load = np.zeros(n), np.zeros(m)
        used, place = np.empty(m, dtype=np.int64), np.full(m, -1, dtype=np.int64)
        core(capacity, caps, n, ent_res, ent_w, ent_f, len(ent_res), rates, load, used, 0, place)
        return rates, load

    return fill


filling_loops = filling(fill_into)
"""The kernel run as Python (tests)."""

_compiled: list[FillInto | None] = []


def compiled_fill_into() -> FillInto | None:
    """The Numba-compiled kernel, or None when Numba is missing or switched off."""
    if not _compiled:
        _compiled.append(_compile())
    return _compiled[0]


def compiled_filling() -> Filling | None:
    """The compiled kernel as a pure function (see :func:`filling`), or None."""
    core = compiled_fill_into()
    return None if core is None else filling(core)


def _compile() -> FillInto | None:
    if os.environ.get("LOOM_SIM_NO_JIT", "") not in ("", "0"):
        return None
    try:
        import numba
    except ImportError:
        return None
    fn: FillInto = numba.njit(cache=True, nogil=True)(fill_into)
    return fn
