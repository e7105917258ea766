"""Does the simulated machine's state repeat? The measurement a fast-forward rests on.

A steady-state fast-forward may skip whole periods of a simulation only where the
machine's state at a boundary repeats an earlier boundary's state shifted in time: every
engine's place in its program (loop counters aside), every circular buffer's occupancy,
the flows in flight with their remaining bytes and rates, the pending events and pipe
rendezvous, all relative to the current cycle. This probe takes that state each time the
program's first engine makes a request (a boundary) and reports whether, when and with
what period it repeats, and so how much any such fast-forward could save at best.

The state compared is a necessary condition for skipping, not a sufficient one (it
leaves out the pipes' round-robin counters and whether future addresses repeat), so a
repeat found here is an upper bound on what a fast-forward could use, and no repeat is
proof that none is possible. Times and bytes are compared after rounding to `decimals`
digits (0: to the cycle and the byte).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom.arch import Arch
from loom.ir.program import Program
from loom.sim.engine import Process, Scheduler
from loom.sim.pipes import PipeHub
from loom.sim.simulate import simulate


@dataclass(frozen=True, slots=True)
class Periodicity:
    """What the probe saw over one simulation."""

    cycles: float
    events: int
    boundaries: int
    """States taken (requests of the first engine)."""
    distinct: int
    """Distinct states among them."""
    discrete_repeats: int
    """Boundaries whose state, times and bytes left out, had been seen before."""
    repeats: int
    """Boundaries whose whole state had been seen before."""
    first_seen: float | None
    """Cycle of the earlier boundary of the first repeat (None: no repeat)."""
    first_repeat: float | None
    """Cycle at which that state was seen again."""
    period_events: int
    """Events simulated between the two (one period)."""
    events_at_repeat: int
    """Events simulated up to the first repeat."""
    repeated_events: int
    """Events between two consecutive boundaries whose states both repeat earlier ones:
    the most a fast-forward could skip."""
    finish_spread: float
    """(last - first) / last of the finishing cycles of one engine kind over the cores
    (the largest over the kinds): cores that run the same work at different paces drift
    apart, and then the whole machine's state cannot repeat."""

    @property
    def period_cycles(self) -> float:
        if self.first_seen is None or self.first_repeat is None:
            return 0.0
        return self.first_repeat - self.first_seen

    @property
    def speedup_bound(self) -> float:
        """Events of the full simulation over those a perfect fast-forward would still
        simulate (all but `repeated_events`)."""
        needed = self.events - self.repeated_events
        return self.events / needed if needed > 0 else 1.0


class _Probe:
    def __init__(self, decimals: int) -> None:
        self.decimals = decimals
        self.seen: dict[int, tuple[float, int]] = {}
        self.discrete: set[int] = set()
        self.boundaries = 0
        self.discrete_repeats = 0
        self.repeats = 0
        self.first: tuple[float, float, int, int] | None = None
        self.last: tuple[bool, int] = (False, 0)
        """Whether the previous boundary's state was a repeat, and the events then."""
        self.repeated_events = 0

    def __call__(self, sched: Scheduler, procs: list[Process]) -> None:
        self.boundaries += 1
        discrete, continuous = machine_state(sched, procs, self.decimals)
        d = hash(discrete)
        if d in self.discrete:
            self.discrete_repeats += 1
        else:
            self.discrete.add(d)
        key = hash((discrete, continuous))
        earlier = self.seen.get(key)
        was_repeat, events_then = self.last
        self.last = (earlier is not None, sched.events)
        if earlier is None:
            self.seen[key] = (sched.now, sched.events)
            return
        if was_repeat:
            self.repeated_events += sched.events - events_then
        self.repeats += 1
        if self.first is None:
            t0, e0 = earlier
            self.first = (t0, sched.now, sched.events - e0, sched.events)


def machine_state(
    sched: Scheduler, procs: list[Process], decimals: int
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(discrete part, times and bytes rounded to `decimals`) of the machine's state,
    relative to the current cycle."""
    now = sched.now

    def _r(x: float) -> float:
        return round(x, decimals)

    engines: list[Any] = []
    buffers: dict[int, tuple[Any, ...]] = {}
    hub: PipeHub | None = None
    for p in procs:
        frame = p.frame
        if p.finished is not None or frame is None:
            engines.append(None)
            continue
        hub = frame.shared.hub
        for name, cb in frame.cbs.items():
            buffers[id(cb)] = (
                p.core,
                name,
                cb.reserved - cb.popped,
                cb.pushed - cb.taken,
                len(cb.waiters),
            )
        waiting = p.waiting if isinstance(p.waiting, str) else _name(p.waiting)
        engines.append((tuple((id(b.stmts), b.pos) for b in frame.stack), waiting))
    flows = sorted(
        (f.res.tobytes(), f.w.tobytes(), f.nbytes, f.cap, _r(f.remaining), _r(f.rate))
        for f in sched.net.flows
    )
    heap = sorted((round(t - now, decimals), seq, _name(fn)) for t, seq, fn, _ in sched.pending())
    rendezvous = []
    if hub is not None:
        for (net, pipe, _), rv in sorted(hub.open_rendezvous()):
            ready = sorted((core, round(t - now, decimals)) for core, (t, _) in rv.ready.items())
            rendezvous.append((net, pipe, rv.sender is None, tuple(ready)))
    discrete = (
        tuple(engines),
        tuple(sorted(buffers.values())),
        tuple(f[:4] for f in flows),
        tuple(h[2] for h in heap),
        tuple((net, pipe, alone, tuple(c for c, _ in r)) for net, pipe, alone, r in rendezvous),
        _r(sched.net.time - now),
    )
    continuous = (
        tuple(f[4:] for f in flows),
        tuple(h[0] for h in heap),
        tuple(tuple(t for _, t in r[3]) for r in rendezvous),
    )
    return discrete, continuous


def _name(fn: Any) -> str:
    inner = getattr(fn, "func", fn)  # functools.partial
    return str(getattr(inner, "__qualname__", type(inner).__name__))


def measure_periodicity(program: Program, arch: Arch, decimals: int = 0) -> Periodicity:
    """Simulate `program` with the probe on and report what repeated."""
    probe = _Probe(decimals)
    result = simulate(program, arch, watch=probe)
    spread = 0.0
    for engine in {c.engine for c in result.core_busy}:
        finish = [c.finished_cycles for c in result.core_busy if c.engine == engine]
        if max(finish) > 0:
            spread = max(spread, (max(finish) - min(finish)) / max(finish))
    first = probe.first
    return Periodicity(
        cycles=result.cycles,
        events=result.events,
        boundaries=probe.boundaries,
        distinct=len(probe.seen),
        discrete_repeats=probe.discrete_repeats,
        repeats=probe.repeats,
        first_seen=first[0] if first else None,
        first_repeat=first[1] if first else None,
        period_events=first[2] if first else 0,
        events_at_repeat=first[3] if first else 0,
        repeated_events=probe.repeated_events,
        finish_spread=spread,
    )
