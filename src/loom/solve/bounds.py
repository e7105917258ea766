"""Lower bounds that let the ranking skip candidates without solving them.

`core_bound` needs only the candidate: its cores' share of the kernel's matmul work at
the peak tile-matmul rate, or of the compulsory DRAM traffic at the DRAM's achievable
bandwidth. `path_bound` needs the problem: every pipe reduced to the slowest of its
load stage, body and store stage (what it costs with both knobs on, the least it can
cost), so it is below T(x, b) for every assignment — minimised over the tile domains.
Both are valid lower bounds of the candidate's optimum under the model, so pruning with
them never changes the ranking.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from loom.arch import Arch
from loom.ir.candidate import Candidate
from loom.ir.problem import For, HegNode, Leaf, Pipe, Problem, Seq, Stage
from loom.symbolic import Const, Expr, add, maximum
from loom.symbolic.pyexpr import compile_expr

PATH_BOUND_LIMIT = 1_000_000
"""Largest tile-domain product the path bound enumerates (above it: no bound)."""


def core_bound(
    candidate: Candidate, arch: Arch, fidelity: str, flops: int, dram_bytes: int, depth: int
) -> int:
    tile_flops = 2 * arch.tile.rows * arch.tile.cols * arch.tile.cols
    compute = math.ceil(flops * arch.matmul.cycles(fidelity) / (tile_flops * candidate.num_cores))
    dram = math.ceil(dram_bytes / (arch.dram.peak_bytes_per_cycle * arch.dram.efficiency) / depth)
    return max(compute, dram)


def compute_path(node: HegNode) -> Expr:
    match node:
        case Leaf(terms=terms):
            # a loop's fill (`loom.model.heg.steady_fill`) is never negative: leaving it
            # out keeps the bound below T and its expression free of knob selects
            kept = [t.cycles for t in terms if t.kind != "fill"]
            return add(*kept) if kept else Const(0)
        case Stage():
            return Const(0)
        case Seq(children=children):
            return add(*(compute_path(c) for c in children)) if children else Const(0)
        case For(trip=trip, body=body):
            return trip * compute_path(body)
        case Pipe(load=load, body=body, store=store):
            return maximum(load.cycles, compute_path(body), store.cycles)
    raise TypeError(f"not an HEG node: {node!r}")


def path_bound(problem: Problem) -> int:
    path = compute_path(problem.heg)
    names = sorted(path.free_names())
    domains = [problem.domains[n] for n in names]
    if not all(domains) or math.prod(len(d) for d in domains) > PATH_BOUND_LIMIT:
        return 0
    if not names:
        return int(path.eval({}))
    fn = compile_expr(path, names, _ELEMENTWISE)
    grids = np.meshgrid(*(np.array(d, dtype=np.int64) for d in domains), indexing="ij")
    return int(np.min(fn(*grids)))


def _reduce(op: np.ufunc) -> object:
    return lambda *args: functools.reduce(op, args)


_ELEMENTWISE = {"min": _reduce(np.minimum), "max": _reduce(np.maximum)}
"""`min`/`max` over whole arrays: the compute path has no selects, so it vectorises."""
