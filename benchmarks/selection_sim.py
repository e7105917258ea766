"""Simulating the judge's sets (`selection.py`): each schedule materialized, lowered and
simulated, on forked workers; a large GEMM schedule from smaller simulations of it
(`shrink`), except those that decide the case's figures."""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import replace

from bench_util import forked_map
from loom.arch import Arch, load_arch
from loom.errors import LoomError
from loom.flows.helion import CompileOptions, CompileResult, compile_kernel
from loom.flows.lowered import lower_schedule
from loom.ir.solution import Solution
from loom.kernels.registry import resolve_kernel
from loom.sim import simulate
from loom.solve.materialize import CompileStats, materialize
from selection_set import ARCHS, Entry
from shrink import Extrapolation, Reduction, Shallow, plan


def simulate_entry(result: CompileResult, arch: Arch, entry: Entry) -> float:
    """Simulated cycles of one schedule of the set; inf where it does not lower (the
    judge leaves it out of the set and counts it: `selection.run_case`)."""
    try:
        return _simulated(result, arch, entry)
    except LoomError:
        return math.inf


def _simulated(result: CompileResult, arch: Arch, entry: Entry) -> float:
    sol = Solution(entry.problem.candidate.name, "feasible", entry.env, entry.modeled)
    stats = CompileStats(
        kernel=result.schedule.kernel,
        arch=arch.name,
        shape=dict(result.schedule.shape),
        dtype=result.schedule.dtype,
        math_fidelity=result.schedule.math_fidelity,
        candidates_total=0,
        candidates_after_pruning=0,
        candidates_feasible=0,
        compile_seconds=0.0,
    )
    schedule = materialize(entry.problem, sol, ((sol, entry.problem),), stats, arch, explain=False)
    lowered = lower_schedule(result.program, result.buffered, schedule, arch, result.log)
    return float(simulate(lowered.lowered, arch).cycles)


def pick_dram_gbps(result: CompileResult, arch: Arch) -> float:
    """The pick's simulated DRAM bandwidth (bytes read and written over its simulated
    time, `Arch.gbps`): one more simulation of the compiled program, whose counters the
    set's workers do not return."""
    sim = simulate(result.lowered.lowered, arch)
    return arch.gbps(sim.bytes_moved.dram_read + sim.bytes_moved.dram_write, sim.cycles)


def simulate_runs(arch: Arch, runs: list[tuple[CompileResult, Entry]], jobs: int) -> list[float]:
    """Simulated cycles of every (compiled program, entry) run, in order."""
    return forked_map(lambda i: simulate_entry(runs[i][0], arch, runs[i][1]), len(runs), jobs)


def warm_simulator() -> None:
    """Simulate a small GEMM once here, so that the simulator's compiled kernels are loaded
    before the workers fork: each would otherwise load them again (about 0.25 s a pool)."""
    arch = load_arch(ARCHS[0])
    result = compile_kernel(
        resolve_kernel("gemm"), CompileOptions(arch, {"M": 256, "N": 256, "K": 256})
    )
    simulate(result.lowered.lowered, arch)


def simulate_all(result: CompileResult, arch: Arch, entries: list[Entry], jobs: int) -> list[float]:
    """Simulated cycles of every entry of one compiled program, in order."""
    return simulate_runs(arch, [(result, e) for e in entries], jobs)


def simulate_set(
    result: CompileResult,
    arch: Arch,
    entries: list[Entry],
    options: CompileOptions,
    args: argparse.Namespace,
) -> tuple[list[float], Extrapolation | None]:
    """Simulated cycles of every entry of a set. A GEMM entry large enough
    (`shrink.plan`) is simulated with one or two dimensions at two smaller sizes each and
    its time at full size extrapolated; the pick, `--check` seeded others, and then the
    `--near` fastest entries whose extrapolated time is within `--margin` of the fastest
    time found are simulated in full, and their full times are the ones used. So the
    pick's time (sim/model) is simulated, and the set's fastest too unless more than
    `--near` schedules tie with it within the margin (then the regret may rest on an
    estimate: the case marks it); the difference between the two ways is reported.
    `--exact` simulates every entry in full."""
    if args.exact:
        return simulate_all(result, arch, entries, args.jobs), None
    shape = options.shape
    banks = len(arch.dram.banks)
    wanted = {i: r for i, e in enumerate(entries) if (r := plan(result, e.problem, e.env, banks))}
    shapes = {i: [_key(r.shape_at(shape, p)) for p in r.points] for i, r in wanted.items()}
    keys = sorted({key for at in shapes.values() for key in at})
    compiled = forked_map(
        lambda i: Shallow.compile(result, options, dict(keys[i])), len(keys), args.jobs
    )
    shallow = dict(zip(keys, compiled, strict=True))
    runs: list[tuple[CompileResult, Entry]] = []
    plans: dict[int, tuple[Reduction, int]] = {}
    for i, r in wanted.items():
        at = [shallow[key] for key in shapes[i]]
        problems = [s.problem(entries[i].problem, entries[i].env) for s in at]
        if any(p is None for p in problems):
            continue  # not legal at a smaller size: simulated in full
        plans[i] = (r, len(runs))
        for s, p in zip(at, problems, strict=True):
            assert p is not None
            runs.append((s.result, replace(entries[i], problem=p)))
    if not plans:
        return simulate_all(result, arch, entries, args.jobs), None
    rng = random.Random(args.seed)
    others = sorted(plans.keys() - {0})
    full = sorted(
        {
            0,
            *(i for i in range(len(entries)) if i not in plans),
            *rng.sample(others, min(args.check, len(others))),
        }
    )
    # The full runs are the longest: first, so that the workers finish together.
    sims = simulate_runs(arch, [(result, entries[i]) for i in full] + runs, args.jobs)
    exact = dict(zip(full, sims[: len(full)], strict=True))
    small = sims[len(full) :]
    guess = {i: r.extrapolate(small[at : at + len(r.points)]) for i, (r, at) in plans.items()}
    fastest = min(*exact.values(), *guess.values())
    close = [i for i in plans if i not in exact and guess[i] <= fastest * (1 + args.margin)]
    near = sorted(close, key=lambda i: (guess[i], i))[: args.near]
    exact.update(
        zip(near, simulate_runs(arch, [(result, entries[i]) for i in near], args.jobs), strict=True)
    )
    errors = [abs(guess[i] - exact[i]) / exact[i] for i in plans if i in exact]
    out = [exact[i] if i in exact else guess[i] for i in range(len(entries))]
    estimated = frozenset(i for i in plans if i not in exact)
    return out, Extrapolation(estimated, len(errors), max(errors, default=0.0), args.margin)


def _key(shape: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """A shape as a sortable, hashable key."""
    return tuple(sorted(shape.items()))
