"""Lower bounds that let the ranking skip candidates without solving them.

`core_bound` needs only the candidate: its cores' share of the kernel's matmul work at
the peak tile-matmul rate, or of the compulsory DRAM traffic at the DRAM's achievable
bandwidth. `path_bound` needs the problem: every pipe reduced to the slowest of its
load stage, body and store stage (what it costs with both knobs on, the least it can
cost), so it is below T(x, b) for every assignment — minimised over the tile domains.
`class_bound` is the same path with each load stage at its floor (what it costs under
any copy mode and group area: `Stage.floor`), minimised over the unfiltered domains: it
is the same for every candidate of a class (`class_key`) and below each one's T, so one
built problem bounds the whole class.
All are valid lower bounds of the candidate's optimum under the model, so pruning with
them never changes the ranking.
"""

from __future__ import annotations

import math

import numpy as np

from loom.arch import Arch
from loom.ir.candidate import Candidate
from loom.ir.problem import For, HegNode, Leaf, Pipe, Problem, Seq, Stage
from loom.solve.table import Grid
from loom.symbolic import Const, Expr, add, maximum

PATH_BOUND_LIMIT = 1_000_000
"""Largest tile-domain product the path bound enumerates (above it: no bound)."""


def core_bound(
    candidate: Candidate, arch: Arch, fidelity: str, flops: int, dram_bytes: int, depth: int
) -> int:
    tile_flops = 2 * arch.tile.rows * arch.tile.cols * arch.tile.cols
    compute = math.ceil(flops * arch.matmul.cycles(fidelity) / (tile_flops * candidate.num_cores))
    dram = math.ceil(dram_bytes / (arch.dram.peak_bytes_per_cycle * arch.dram.efficiency) / depth)
    return max(compute, dram)


def compute_path(node: HegNode, floor: bool = False) -> Expr:
    """Below T(x, b) for every assignment; `floor` charges each load stage its floor."""
    match node:
        case Leaf(terms=terms):
            # a loop's fill (`loom.model.steady.Steady.steady_fill`) is never negative: leaving it
            # out keeps the bound below T and its expression free of knob selects
            kept = [
                t.floor if floor and t.floor is not None else t.cycles
                for t in terms
                if t.kind != "fill"
            ]
            return add(*kept) if kept else Const(0)
        case Stage(cycles=cycles):
            return cycles  # a store the body waits for (`loom.model.heg.HegBuilder.block`)
        case Seq(children=children):
            return add(*(compute_path(c, floor) for c in children)) if children else Const(0)
        case For(trip=trip, body=body):
            return trip * compute_path(body, floor)
        case Pipe(load=load, body=body, store=store):
            ell = load.floor if floor else load.cycles
            return maximum(ell, compute_path(body, floor), store.cycles)
    raise TypeError(f"not an HEG node: {node!r}")


def path_bound(problem: Problem) -> int:
    return _minimum(compute_path(problem.heg), problem.domains)


def class_key(candidate: Candidate) -> tuple[object, ...]:
    """What a problem's `class_bound` depends on: the cores per grid axis (its tile
    domains, waves, trips and compute), the split-reduction axes and gather groups, the
    cores in use along each mesh dimension (the stores' NoC routes) and the engine of
    every copy (each load stage's floor, and whether a store waits in the body), and
    whether the stores go one wave late (`Candidate.stores_late`). The copies' modes
    and group areas, which set the load stages, are left out."""
    return (
        tuple(sorted(candidate.spatial.items())),
        candidate.gather_axes,
        candidate.stores_late,
        (candidate.mapping.cores_y, candidate.mapping.cores_x),
        tuple((c.engine, c.area if c.mode == "gather" else None) for c in candidate.copies),
    )


def class_bound(problem: Problem) -> int:
    """The least the floored path takes over the unfiltered domains: below the optimum
    of every candidate with the same `class_key`."""
    return _minimum(compute_path(problem.heg, floor=True), problem.split_domains)


def _minimum(path: Expr, domains: dict[str, tuple[int, ...]]) -> int:
    """The least value of `path` over the domains of its symbols (0 when too many)."""
    names = sorted(path.free_names())
    if not all(n in domains for n in names):
        return 0
    values = {n: domains[n] for n in names}
    if not all(values.values()) or math.prod(len(d) for d in values.values()) > PATH_BOUND_LIMIT:
        return 0
    return int(np.min(Grid(values).expr(path)))
