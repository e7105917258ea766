"""The fluid network's per-event array work, as loops (compiled) and as NumPy (twins).

Between rate solves the network advances its flows, finds the next one to finish and
drops the finished ones. Each is a few NumPy calls on ~45 flows, so each costs mostly
call overhead; events are frequent (one flash attention simulation makes ~400,000), so
with Numba the same work runs as the loop functions below, compiled. The loops do the
NumPy twins' arithmetic element by element (one multiply and one subtract or add per
flow, the same comparisons; a minimum does not depend on its order), so both give the
same bits; tests/sim/test_sim_flow_ops.py checks them against each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from loom.sim.fill_jit import fill_into
from loom.sim.fill_numpy import fill_into_numpy

FINISHED_REL = 1e-7
"""A flow has finished when at most this fraction of its bytes (+ FINISHED_ABS) is left:
the fluid arithmetic leaves rounding crumbs."""
FINISHED_ABS = 1e-9


def advance_loops(
    rem: np.ndarray,
    rate: np.ndarray,
    n: int,
    carried: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    dt: float,
) -> None:
    """Flows 0..n-1 move rate x dt bytes; each resource carries load x dt more.

    Only the resources of `used[:nused]` have load (the last solve's support): the
    others would add 0 x dt, which leaves their bytes as they are, so they are not
    visited (a chip has ~1,000 resources, the flows use ~50)."""
    for i in range(n):
        rem[i] -= rate[i] * dt
    for j in range(nused):
        r = used[j]
        carried[r] += load[r] * dt


def advance_numpy(
    rem: np.ndarray,
    rate: np.ndarray,
    n: int,
    carried: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    dt: float,
) -> None:
    if n:
        rem[:n] -= rate[:n] * dt
    live = used[:nused]
    carried[live] += load[live] * dt


def earliest_loops(rem: np.ndarray, rate: np.ndarray, n: int) -> float:
    """Time until the first of flows 0..n-1 that moves finishes (inf when none moves)."""
    best = math.inf
    for i in range(n):
        if rate[i] > 0.0:
            t = rem[i] / rate[i]
            if t < best:
                best = t
    return best


def earliest_numpy(rem: np.ndarray, rate: np.ndarray, n: int) -> float:
    r = rate[:n]
    moving = r > 0.0
    return float((rem[:n][moving] / r[moving]).min()) if moving.any() else math.inf


def pop_loops(
    n: int,
    ne: int,
    cap: np.ndarray,
    rem: np.ndarray,
    rate: np.ndarray,
    nbytes: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    done: np.ndarray,
) -> tuple[int, int, int]:
    """Drop the finished flows of slots 0..n-1 (and their entries of 0..ne-1), moving
    the rest down in order and renumbering their entries; the finished slots' old
    numbers go to `done`. Returns (flows, entries, finished)."""
    newi = np.empty(n, dtype=np.int64)
    m = 0
    nd = 0
    for i in range(n):
        if rem[i] <= FINISHED_REL * nbytes[i] + FINISHED_ABS:
            done[nd] = i
            nd += 1
            newi[i] = -1
        else:
            newi[i] = m
            cap[m] = cap[i]
            rem[m] = rem[i]
            rate[m] = rate[i]
            nbytes[m] = nbytes[i]
            m += 1
    if nd == 0:
        return n, ne, 0
    me = 0
    for e in range(ne):
        j = newi[ent_f[e]]
        if j >= 0:
            ent_res[me] = ent_res[e]
            ent_w[me] = ent_w[e]
            ent_f[me] = j
            me += 1
    return m, me, nd


def pop_numpy(
    n: int,
    ne: int,
    cap: np.ndarray,
    rem: np.ndarray,
    rate: np.ndarray,
    nbytes: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    done: np.ndarray,
) -> tuple[int, int, int]:
    finished = rem[:n] <= FINISHED_REL * nbytes[:n] + FINISHED_ABS
    idx = np.flatnonzero(finished)
    nd = len(idx)
    if not nd:
        return n, ne, 0
    done[:nd] = idx
    keep = ~finished
    m = n - nd
    for a in (cap, rem, rate, nbytes):
        a[:m] = a[:n][keep]
    old_f = ent_f[:ne]
    kept = keep[old_f]
    me = int(np.count_nonzero(kept))
    ent_res[:me] = ent_res[:ne][kept]
    ent_w[:me] = ent_w[:ne][kept]
    ent_f[:me] = (np.cumsum(keep) - 1)[old_f[kept]]
    return m, me, nd


# ----- steps: each one call per event of the network ---------------------------------
# A call into compiled code costs about as much as the loops of a small network, so
# the network's steps run in one call each: a flow's start (advance, then its slot and
# entries), the drop of finished flows (advance, then pop) and a re-solve (rates, then
# the next finish). Each does its parts in the order the parts did when called one by
# one, so the bits are those of the parts (NumPy or compiled alike).


def put_loops(
    rem: np.ndarray,
    rate: np.ndarray,
    n: int,
    carried: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    dt: float,
    cap: np.ndarray,
    nbytes: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    ne: int,
    fcap: float,
    frem: float,
    fbytes: float,
    res: np.ndarray,
    w: np.ndarray,
) -> None:
    """Advance flows 0..n-1 by `dt` (when positive), then start a flow of `fbytes`
    (`frem` left) at most at `fcap` in slot n, its entries (resources `res`, weights
    `w`) from `ne` on."""
    if dt > 0.0:
        advance_loops(rem, rate, n, carried, load, used, nused, dt)
    cap[n] = fcap
    rem[n] = frem
    rate[n] = 0.0
    nbytes[n] = fbytes
    for j in range(res.shape[0]):
        ent_res[ne + j] = res[j]
        ent_w[ne + j] = w[j]
        ent_f[ne + j] = n


def put_numpy(
    rem: np.ndarray,
    rate: np.ndarray,
    n: int,
    carried: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    dt: float,
    cap: np.ndarray,
    nbytes: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    ne: int,
    fcap: float,
    frem: float,
    fbytes: float,
    res: np.ndarray,
    w: np.ndarray,
) -> None:
    if dt > 0.0:
        advance_numpy(rem, rate, n, carried, load, used, nused, dt)
    cap[n], rem[n], rate[n], nbytes[n] = fcap, frem, 0.0, fbytes
    k = len(res)
    ent_res[ne : ne + k] = res
    ent_w[ne : ne + k] = w
    ent_f[ne : ne + k] = n


def advance_pop_loops(
    dt: float,
    carried: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    n: int,
    ne: int,
    cap: np.ndarray,
    rem: np.ndarray,
    rate: np.ndarray,
    nbytes: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    done: np.ndarray,
) -> tuple[int, int, int]:
    """Advance by `dt` (when positive), then :func:`pop_loops`."""
    if dt > 0.0:
        advance_loops(rem, rate, n, carried, load, used, nused, dt)
    return pop_loops(n, ne, cap, rem, rate, nbytes, ent_res, ent_w, ent_f, done)


def advance_pop_numpy(
    dt: float,
    carried: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    n: int,
    ne: int,
    cap: np.ndarray,
    rem: np.ndarray,
    rate: np.ndarray,
    nbytes: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    done: np.ndarray,
) -> tuple[int, int, int]:
    if dt > 0.0:
        advance_numpy(rem, rate, n, carried, load, used, nused, dt)
    return pop_numpy(n, ne, cap, rem, rate, nbytes, ent_res, ent_w, ent_f, done)


def settle_loops(
    capacity: np.ndarray,
    cap: np.ndarray,
    n: int,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    ne: int,
    rate: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    place: np.ndarray,
    rem: np.ndarray,
) -> tuple[int, float]:
    """The rate solve (loom.sim.fill_jit.fill_into), then the time until the first
    flow finishes: (resources used, that time)."""
    k = fill_into(capacity, cap, n, ent_res, ent_w, ent_f, ne, rate, load, used, nused, place)
    return k, earliest_loops(rem, rate, n)


def settle_numpy(
    capacity: np.ndarray,
    cap: np.ndarray,
    n: int,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
    ne: int,
    rate: np.ndarray,
    load: np.ndarray,
    used: np.ndarray,
    nused: int,
    place: np.ndarray,
    rem: np.ndarray,
) -> tuple[int, float]:
    k = fill_into_numpy(capacity, cap, n, ent_res, ent_w, ent_f, ne, rate, load, used, nused, place)
    return k, earliest_numpy(rem, rate, n)


@dataclass(frozen=True, slots=True)
class FlowOps:
    """The operations, all compiled or all NumPy: three parts and the steps made of them."""

    advance: Callable[..., None]
    earliest: Callable[[np.ndarray, np.ndarray, int], float]
    pop: Callable[..., tuple[int, int, int]]
    put: Callable[..., None]
    advance_pop: Callable[..., tuple[int, int, int]]
    settle: Callable[..., tuple[int, float]]


NUMPY_OPS = FlowOps(
    advance_numpy, earliest_numpy, pop_numpy, put_numpy, advance_pop_numpy, settle_numpy
)

_compiled: list[FlowOps] = []


def compiled_ops() -> FlowOps:
    """The loop functions compiled by Numba (the caller has checked Numba is usable).
    The parts are registered as callable from compiled code, so each step compiles
    with its parts inside it."""
    if not _compiled:
        import numba
        from numba.extending import register_jitable

        for part in (advance_loops, earliest_loops, pop_loops, fill_into):
            register_jitable(part)
        jit = numba.njit(cache=True, nogil=True)
        _compiled.append(
            FlowOps(
                jit(advance_loops),
                jit(earliest_loops),
                jit(pop_loops),
                jit(put_loops),
                jit(advance_pop_loops),
                jit(settle_loops),
            )
        )
    return _compiled[0]
