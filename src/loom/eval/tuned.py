"""The "tuned" baselines' search: the fastest in the simulator of every legal
configuration of TTNN's own knobs a baseline offers, as a performance engineer tuning
TTNN on the device would (the baselines enumerate, the evaluation times: baselines never
simulate).

The search is an exact branch and bound: every candidate is built and lowered, and gets a
lower bound on its simulated cycles (`loom.eval.bound`); candidates are simulated in
ascending order of their bounds, and one whose bound exceeds the fastest simulated so far
is left unsimulated, since it cannot be faster. The pick is the one the exhaustive search
makes (the fewest cycles, the first in the offered order on ties): a candidate left out
is strictly slower than the pick.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from loom.baselines.build import Policy
from loom.errors import ScheduleError
from loom.ir.schedule import Schedule
from loom.sim import SimResult

P = TypeVar("P")
"""What `prepare` makes of a candidate for `simulate` (the lowered program)."""


@dataclass(frozen=True)
class Tuned:
    """The fastest candidate's policy, schedule and simulation, the search's wall
    seconds, and how many candidates were simulated of those that built."""

    policy: Policy
    schedule: Schedule
    sim: SimResult
    seconds: float
    simulated: int = 0
    built: int = 0


@dataclass(frozen=True)
class Prepared(Generic[P]):
    """A candidate ready to simulate: its schedule, what `simulate` takes, and a lower
    bound on its simulated cycles."""

    schedule: Schedule
    program: P
    bound: float
    seconds: float


def fastest(
    candidates: tuple[Policy, ...],
    prepare: Callable[[Policy], Prepared[P]],
    simulate: Callable[[P], tuple[SimResult, float]],
) -> Tuned:
    """The candidate that simulates fastest (the first on ties), found by branch and
    bound (module docstring); a candidate Loom's lowering rejects (`prepare` raises a
    ScheduleError: its buffers do not fit Loom's L1 plan) is left out and named in the
    notes. ScheduleError when none is left or there is none."""
    built: list[tuple[int, Policy, Prepared[P]]] = []
    rejected: list[str] = []
    seconds = 0.0
    for index, policy in enumerate(candidates):
        try:
            ready = prepare(policy)
        except ScheduleError as err:
            rejected.append(f"{_label(policy)} ({' '.join(str(err).split())[:80]})")
            continue
        seconds += ready.seconds
        built.append((index, policy, ready))
    if not built:
        raise ScheduleError(f"no candidate builds: {'; '.join(rejected) or 'none offered'}")
    timed: list[tuple[float, int, Policy, Prepared[P], SimResult]] = []
    bounded: list[str] = []
    for index, policy, ready in sorted(built, key=lambda b: (b[2].bound, b[0])):
        if timed and ready.bound > min(t[0] for t in timed):
            bounded.append(f"{_label(policy)} >= {ready.bound:.0f}")
            continue
        sim, secs = simulate(ready.program)
        seconds += secs
        timed.append((sim.cycles, index, policy, ready, sim))
    _, _, policy, ready, sim = min(timed, key=lambda t: (t[0], t[1]))
    tried = ", ".join(f"{_label(p)} {c:.0f}" for c, _, p, *_ in sorted(timed, key=lambda t: t[1]))
    notes: tuple[str, ...] = (f"fastest of {len(timed)} simulated (cycles): {tried}",)
    if bounded:
        notes += (f"not simulated, bounded below by the fastest (cycles): {', '.join(bounded)}",)
    if rejected:
        notes += (f"not built by Loom's lowering: {'; '.join(rejected)}",)
    schedule = dataclasses.replace(ready.schedule, notes=ready.schedule.notes + notes)
    return Tuned(policy, schedule, sim, seconds, len(timed), len(built))


def _label(policy: Policy) -> str:
    """The candidate's knobs as its block sizes say them (e.g. ``tile_m=128 tile_n=256``)."""
    return " ".join(f"{k}={v}" for k, v in sorted(policy.block_sizes.items()) if k != "tile_b")
