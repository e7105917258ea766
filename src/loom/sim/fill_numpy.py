"""The max-min fair rate solve with NumPy: the compiled kernel's twin (same bits).

Without Numba (or with LOOM_SIM_NO_JIT=1) the network solves with these; with it, the
tests check loom.sim.fill_jit's loops against them and against a reference.
"""

from __future__ import annotations

import math

import numpy as np

from loom.sim.fill_jit import REL_EPS


def fill_into_numpy(
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
    rates[:n], new = rates_and_load(capacity, caps[:n], ent_res[:ne], ent_w[:ne], ent_f[:ne])
    support = np.unique(ent_res[:ne])
    used[: len(support)] = support
    load[support] = new[support]
    return len(support)


def rates_and_load(
    capacity: np.ndarray,
    caps: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Fair rates and each resource's load, with NumPy (the compiled kernel's twin)."""
    rates = progressive_filling(capacity, caps, ent_res, ent_w, ent_f)
    load = np.bincount(ent_res, weights=ent_w * rates[ent_f], minlength=len(capacity))
    return rates, load


def progressive_filling(
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
