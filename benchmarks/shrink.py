"""A large GEMM schedule's simulated time from a few smaller simulations of it.

The judge (`selection.py`) simulates 100+ schedules per case, and a case whose schedules
run thousands of steps per core takes most of its time. Past the first few steps a
schedule repeats much the same work, so its time is close to affine in the depth (K) and
in the number of waves each core runs (M and N): simulating the same candidate and
assignment with one dimension shrunk to two sizes and extending the line estimates its
time at the full size, and with two dimensions shrunk (four runs) the bilinear surface
through them does. The sizes keep every remaining page on the bank it occupies in the
full run, and the last (partial) step or wave as it is. The cores drift apart over a long
run, so the line can miss by a few percent: the judge simulates the schedules that decide
its figures in full, and reports how far the line was from them.

Flash decode shrunk the same way along its heads (B·H) missed by up to 12% (Blackhole,
B=24) and saved about 90 s of the judge's run, and the smoother estimates raised its
Spearman figure from 0.82 to 0.90: it is simulated in full.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from loom.dataflow import build_buffers
from loom.flows.helion import CompileOptions, CompileResult, trace_kernel
from loom.flows.stages import StageLog
from loom.ir.candidate import Candidate
from loom.ir.geometry import TILE
from loom.ir.problem import Problem
from loom.mapping import enumerate_candidates
from loom.model.inputs import ProblemCache
from selection_families import kernel_spec

MIN_STEPS = 256
"""K steps per core below which a GEMM schedule simulates in about a second: simulated in
full."""

FRACTION = 32
"""The smaller of the two sizes is at least 1/FRACTION of the full one, the larger 2/FRACTION.
Against 16: Wormhole 16384x2048x16384 simulated in 186 s instead of 243 s (`--check 12`,
side by side); over all 44 cases the same figures, and most estimates unchanged; against
`--exact` on 2048x2048x16384 the largest error went 8.1% -> 2.0% (Blackhole) and
1.6% -> 2.9% (Wormhole)."""

AXES = 2
"""Dimensions shrunk together at most. All three (eight runs) measured slower than two on
the one Wormhole 16384³ schedule where all three could shrink (6.2 CPU-s against 4.2):
past two, the runs' fixed costs (tracing, lowering, filling the pipeline) dominate."""


def reduced_sizes(tiles: int, unit: int, lattice: int, min_units: int) -> tuple[int, int] | None:
    """Two sizes smaller than `tiles`, congruent to it modulo `lattice` (a multiple of
    `unit`, what one step or wave covers), or None where simulating both would not halve
    the work. The first is at least `tiles`/FRACTION and `min_units` units, the second at
    least twice that and one lattice step more."""
    first = tiles % lattice or lattice

    def at_least(t: float) -> int:
        return first + lattice * max(0, math.ceil((t - first) / lattice))

    d1 = at_least(max(tiles / FRACTION, min_units * unit))
    d2 = at_least(max(2 * tiles / FRACTION, d1 + 1))
    return (d1, d2) if 2 * (d1 + d2) <= tiles else None


@dataclass(frozen=True)
class Axis:
    """One of a GEMM's dimensions (`M`, `N` or `K`) at two smaller sizes, in tiles."""

    dim: str
    tiles: int
    sizes: tuple[int, int]

    @property
    def cost(self) -> float:
        """The two sizes' work over the full size's."""
        return sum(self.sizes) / self.tiles

    def weights(self) -> tuple[float, float]:
        """Each size's weight on the line through both, at the full size."""
        (d1, d2) = self.sizes
        u = (self.tiles - d1) / (d2 - d1)
        return (1 - u, u)


@dataclass(frozen=True)
class Reduction:
    """A GEMM schedule simulated at every combination of its `axes`' smaller sizes (one
    axis: two runs; two: four), its full-size time extrapolated from theirs."""

    axes: tuple[Axis, ...]

    @property
    def cost(self) -> float:
        """All the runs' work over the full run's."""
        return math.prod(a.cost for a in self.axes)

    @property
    def points(self) -> tuple[tuple[int, ...], ...]:
        """The runs' sizes, one per axis, in the order `extrapolate` takes their times."""
        return tuple(itertools.product(*(a.sizes for a in self.axes)))

    def extrapolate(self, times: Sequence[float]) -> float:
        """The time at full size: linear along each axis through its two sizes (bilinear
        over two axes), the runs' `times` given in the order of `points`."""
        weights = itertools.product(*(a.weights() for a in self.axes))
        return sum(math.prod(w) * t for w, t in zip(weights, times, strict=True))

    def shape_at(self, shape: dict[str, int], point: tuple[int, ...]) -> dict[str, int]:
        """`shape` with each axis's dimension at its size in `point` (tiles)."""
        return {**shape, **{a.dim: size * TILE for a, size in zip(self.axes, point, strict=True)}}


def gemm_reduction(
    shape: dict[str, int], block: dict[str, int], cores: dict[str, int], banks: int
) -> Reduction | None:
    """The cheapest way to shrink a GEMM schedule with `block` tiles per block and `cores`
    cores along M and N, or None where no dimension halves the work.

    Pages interleave round-robin over the banks in row-major tile order: tile (r, c) of a
    tensor C tiles wide is in bank (r·C + c) mod banks.
    - K: A's width is the depth, so depths congruent modulo banks·step keep its row stride
      modulo the banks and the last, partial step (B loses trailing rows only). The lattice
      is banks·step rather than their lcm: it spaces the two depths wider, and with the
      lcm the line missed by up to 6.6% (a 2-step first depth).
    - M: dropping rows of A and C moves no other page; sizes congruent modulo a wave
      (cores along M times the block) keep each core's last, partial wave; at least one.
    - N: B and C are N wide, so sizes congruent modulo the banks too keep their row
      strides.

    Each dimension's sizes keep the pages of the others where they are, so two
    dimensions shrink together (`AXES` at most): the four runs of K and M cost 0.06 of a
    full run of Wormhole 16384³'s pick, against 0.19 for M alone."""
    tiles = {d: shape[d] // TILE for d in ("M", "N", "K")}
    wave = {d: cores[d] * block[d] for d in ("M", "N")}
    ways = {
        "K": (block["K"], banks * block["K"], 2),
        "M": (wave["M"], wave["M"], 1),
        "N": (wave["N"], math.lcm(wave["N"], banks), 1),
    }
    found = [
        Axis(dim, tiles[dim], sizes)
        for dim, (unit, lattice, least) in ways.items()
        if (sizes := reduced_sizes(tiles[dim], unit, lattice, least)) is not None
    ]
    cheapest = sorted(found, key=lambda a: a.cost)[:AXES]
    return Reduction(tuple(sorted(cheapest, key=lambda a: a.dim))) if cheapest else None


def plan(
    result: CompileResult, problem: Problem, env: dict[str, int], banks: int
) -> Reduction | None:
    """How to shrink one schedule of `result`'s kernel (`problem`'s candidate at `env`), or
    None where it is not worth it: not a GEMM, or below MIN_STEPS K steps per core."""
    shape = dict(result.schedule.shape)
    if set(shape) != {"M", "N", "K"}:
        return None
    grid = [a.tile.name for a in result.program.grid]
    m_sym, n_sym = grid
    (k_sym,) = (n for n in problem.tile_names if n not in grid)
    syms = {"M": m_sym, "N": n_sym, "K": k_sym}
    block = {d: env[s] // TILE for d, s in syms.items()}
    blocks = math.ceil(shape["M"] / env[m_sym]) * math.ceil(shape["N"] / env[n_sym])
    steps = blocks / problem.candidate.num_cores * math.ceil(shape["K"] / env[k_sym])
    spatial = problem.candidate.spatial
    cores = {"M": spatial.get(m_sym, 1), "N": spatial.get(n_sym, 1)}
    return gemm_reduction(shape, block, cores, banks) if steps >= MIN_STEPS else None


@dataclass(frozen=True)
class Shallow:
    """The kernel's program, buffers and candidates at one reduced shape, and a way to
    rebuild any candidate's problem there.

    `result` is the full compile's result with the reduced program, buffers and
    candidates in it: a simulation reads only those and the schedule's kernel, dtype and
    fidelity, so nothing is solved at the reduced shape."""

    result: CompileResult
    cache: ProblemCache
    by_name: dict[str, Candidate]

    @staticmethod
    def compile(full: CompileResult, options: CompileOptions, shape: dict[str, int]) -> Shallow:
        spec = kernel_spec(full.schedule.kernel)
        traced = trace_kernel(spec, shape, StageLog(), options.formats)
        buffered = build_buffers(traced.program, options.accumulate)
        candidates = enumerate_candidates(buffered, options.arch)
        result = replace(full, program=traced.program, buffered=buffered, candidates=candidates)
        fidelity = full.schedule.math_fidelity
        cache = ProblemCache(buffered, options.arch, fidelity, traced.flops)
        return Shallow(result, cache, {c.name: c for c in candidates.candidates})

    def problem(self, full: Problem, env: dict[str, int]) -> Problem | None:
        """`full`'s candidate at this shape, where `env` (the same blocks) is legal there.
        Its domains gain `env`'s values: a grid axis's domain keeps only the smallest tile
        size for each wave count, which narrows the search, not what may run."""
        cand = self.by_name.get(full.candidate.name)
        if cand is None or set(env) != set(full.domains):
            return None
        p = self.cache.build(cand)
        widened = {n: tuple(sorted({*d, env[n]})) for n, d in p.domains.items()}
        p = replace(p, domains=widened)
        return p if p.admits(env) else None


@dataclass(frozen=True)
class Extrapolation:
    """How a set's large schedules were simulated: those at `estimated` (indices into the
    set) from smaller simulations only; `compared` both ways (the pick, `--check`
    seeded others, and the fastest few whose extrapolated time came within `--margin` of
    the set's fastest), with the largest relative difference between the two."""

    estimated: frozenset[int]
    compared: int
    max_error: float
    margin: float

    def note(self) -> str:
        warn = " (MORE than --margin: rerun with --exact)" if self.max_error > self.margin else ""
        return (
            f"{len(self.estimated)} extrapolated; {self.compared} also simulated in full, "
            f"differing {100 * self.max_error:.2f}% at most{warn}; "
        )
