"""The max-min fair rate solve compiled with Numba: the same arithmetic, without NumPy's
per-call overhead.

The NumPy progressive filling (loom.sim.network._progressive_filling) makes some 25
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


def filling_loops(  # noqa: C901 - one loop nest, compiled as one function
    capacity: np.ndarray,
    caps: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Max-min fair rates and the load they put on each resource (summed in entry order,
    as `np.bincount` does); loops only, so that Numba can compile it (see the module
    doc).

    Only the resources some entry uses are visited (`used`, in order of first use, each
    entry knowing its resource's place `loc` there): a resource no flow uses has no
    usage, so it never bounds the step, never saturates and keeps its residual; a chip
    has ~1,000 resources and a solve's ~45 flows touch ~100 of them."""
    n = caps.shape[0]
    m = capacity.shape[0]
    ne = ent_res.shape[0]
    place = np.full(m, -1, dtype=np.int64)
    loc = np.empty(ne, dtype=np.int64)
    used = np.empty(ne, dtype=np.int64)
    k = 0
    for e in range(ne):
        r = ent_res[e]
        if place[r] < 0:
            place[r] = k
            used[k] = r
            k += 1
        loc[e] = place[r]
    residual = np.empty(k)
    tol = np.empty(k)
    for j in range(k):
        residual[j] = capacity[used[j]]
        tol[j] = capacity[used[j]] * REL_EPS
    uw = np.zeros(k)
    saturated = np.zeros(k, dtype=np.bool_)
    rates = np.zeros(n)
    frozen = np.zeros(n, dtype=np.bool_)
    newly = np.zeros(n, dtype=np.bool_)
    # the unfrozen flows' entries, in entry order: rounds drop the entries of the flows
    # they froze (as the NumPy version does), so later rounds sum fewer
    act_f = ent_f.copy()
    act_w = ent_w.copy()
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
    load = np.zeros(m)
    for e in range(ne):
        load[ent_res[e]] += ent_w[e] * rates[ent_f[e]]
    return rates, load


_compiled: list[Filling | None] = []


def compiled_filling() -> Filling | None:
    """The Numba-compiled kernel, or None when Numba is missing or switched off."""
    if not _compiled:
        _compiled.append(_compile())
    return _compiled[0]


def _compile() -> Filling | None:
    if os.environ.get("LOOM_SIM_NO_JIT", "") not in ("", "0"):
        return None
    try:
        import numba
    except ImportError:
        return None
    fn: Filling = numba.njit(cache=True, nogil=True)(filling_loops)
    return fn
