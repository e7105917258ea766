"""The "tuned" baselines' search: simulate every legal configuration of TTNN's own knobs
a baseline offers and keep the fastest, as a performance engineer tuning TTNN on the
device would (the baselines enumerate, the evaluation times: baselines never simulate).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from loom.baselines.build import Policy
from loom.errors import ScheduleError
from loom.ir.schedule import Schedule
from loom.sim import SimResult


@dataclass(frozen=True)
class Tuned:
    """The fastest candidate's policy, schedule and simulation, and the search's wall
    seconds."""

    policy: Policy
    schedule: Schedule
    sim: SimResult
    seconds: float


def fastest(
    candidates: tuple[Policy, ...],
    run: Callable[[Policy], tuple[Schedule, SimResult, float]],
) -> Tuned:
    """The candidate `run` simulates fastest (the first on ties); a candidate Loom's
    lowering rejects (a ScheduleError: its buffers do not fit Loom's L1 plan) is left out
    and named in the notes. ScheduleError when none is left or there is none."""
    timed: list[tuple[float, str, Schedule, SimResult, Policy]] = []
    rejected: list[str] = []
    seconds = 0.0
    for policy in candidates:
        label = _label(policy)
        try:
            schedule, sim, secs = run(policy)
        except ScheduleError as err:
            rejected.append(f"{label} ({' '.join(str(err).split())[:80]})")
            continue
        seconds += secs
        timed.append((sim.cycles, label, schedule, sim, policy))
    if not timed:
        raise ScheduleError(f"no candidate builds: {'; '.join(rejected) or 'none offered'}")
    best = min(timed, key=lambda t: t[0])
    tried = ", ".join(f"{label} {cycles:.0f}" for cycles, label, *_ in timed)
    notes: tuple[str, ...] = (f"fastest of {len(timed)} simulated (cycles): {tried}",)
    if rejected:
        notes += (f"not built by Loom's lowering: {'; '.join(rejected)}",)
    schedule = dataclasses.replace(best[2], notes=best[2].notes + notes)
    return Tuned(best[4], schedule, best[3], seconds)


def _label(policy: Policy) -> str:
    """The candidate's knobs as its block sizes say them (e.g. ``tile_m=128 tile_n=256``)."""
    return " ".join(f"{k}={v}" for k, v in sorted(policy.block_sizes.items()) if k != "tile_b")
