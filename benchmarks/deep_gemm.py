"""A deep GEMM schedule's simulated time from two shallower simulations of it.

The judge (`selection.py`) simulates 100+ schedules per case, and a case with thousands of
K steps per core takes most of its time. Past the first few K steps a schedule repeats
much the same step, so its time is close to affine in the number of steps: simulating the
same candidate and assignment at two reduced depths and extending the line estimates its
time at the full depth. The reduced depths keep every remaining K step's pages on the
banks they occupy in the full run. The cores drift apart over a long run, so the line
can miss by a few percent: the judge simulates the schedules that decide its figures in
full, and reports how far the line was from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from loom.ir.candidate import Candidate
from loom.ir.geometry import TILE
from loom.ir.problem import Problem
from loom.kernels.registry import resolve_kernel
from loom.pipeline import CompileOptions, CompileResult, ProblemCache, compile_kernel

MIN_STEPS = 1024
"""K steps per core below which a schedule simulates in seconds: simulated in full."""


def reduced_depths(tiles: int, step: int, banks: int) -> tuple[int, int] | None:
    """Two depths (K in tiles) shorter than `tiles` for a schedule whose K step is `step`
    tiles, or None where simulating both would not halve the work.

    Pages interleave round-robin over the banks in row-major tile order, so tile (r, c)
    of a tensor C tiles wide is in bank (r·C + c) mod banks. Depths congruent to `tiles`
    modulo banks·step keep A's row stride (its width is the depth) the same modulo the
    banks and drop whole groups of `banks` K steps from B's rows, so every step that
    remains reads the banks it reads at full depth. The first is at least 1/16 of the
    depth and two K steps, the second at least 1/8 and one lattice step more."""
    lattice = banks * step
    first = tiles % lattice or lattice

    def at_least(t: float) -> int:
        return first + lattice * max(0, math.ceil((t - first) / lattice))

    d1 = at_least(max(tiles / 16, 2 * step))
    d2 = at_least(max(tiles / 8, d1 + 1))
    return (d1, d2) if 2 * (d1 + d2) <= tiles else None


def extrapolate(depth: int, d1: int, t1: float, d2: int, t2: float) -> float:
    """The time at `depth` on the line through (d1, t1) and (d2, t2)."""
    return t1 + (t2 - t1) * (depth - d1) / (d2 - d1)


@dataclass(frozen=True)
class Shallow:
    """The kernel compiled at one reduced depth: its program and a way to rebuild any
    candidate's problem there."""

    result: CompileResult
    cache: ProblemCache
    by_name: dict[str, Candidate]

    @staticmethod
    def compile(kernel: str, options: CompileOptions, k_tiles: int) -> Shallow:
        shallow = replace(options, shape={**options.shape, "K": k_tiles * TILE}, top_k=1)
        r = compile_kernel(resolve_kernel(kernel), shallow)
        cache = ProblemCache(r.buffered, options.arch, r.schedule.math_fidelity, r.problem.flops)
        return Shallow(r, cache, {c.name: c for c in r.candidates.candidates})

    def problem(self, full: Problem, env: dict[str, int]) -> Problem | None:
        """`full`'s candidate at this depth, where `env` is a legal assignment of it."""
        cand = self.by_name.get(full.candidate.name)
        if cand is None:
            return None
        p = self.cache.build(cand)
        return p if p.admits(env) else None


@dataclass(frozen=True)
class Extrapolation:
    """How a set's deep schedules were simulated: `extrapolated` of them from two reduced
    depths only; `compared` both ways (the pick, `--check` seeded others, and every one
    whose extrapolated time came within `--margin` of the set's fastest), with the largest
    relative difference between the two."""

    extrapolated: int
    compared: int
    max_error: float
    margin: float

    def note(self) -> str:
        warn = " (MORE than --margin: rerun with --exact)" if self.max_error > self.margin else ""
        return (
            f"{self.extrapolated} extrapolated in K; {self.compared} also simulated in full, "
            f"differing {100 * self.max_error:.2f}% at most{warn}; "
        )
