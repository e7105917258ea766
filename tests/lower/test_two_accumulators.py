"""Two matmul accumulators fed by one K loop: every placement combination the model offers
lowers, each placed accumulator held in its own block across the shared loop. The GeGLU
kernel is the judge's `geglu_mlp` family file."""

from __future__ import annotations

import dataclasses
import functools
import itertools
from pathlib import Path

import pytest
from cases import MN
from schedules import make_schedule
from two_accumulators import two_products

from loom.arch import load_arch
from loom.backends.ttlang import verify_outputs
from loom.dataflow import build_buffers
from loom.frontend import import_kernel
from loom.ir.buffers import PLACEMENTS, BufferedProgram
from loom.ir.program import Compute, FillExpr, Program, walk_stmts
from loom.ir.tile import TileProgram
from loom.kernels.registry import KernelSpec, resolve_kernel
from loom.lower import lower
from loom.mapping import enumerate_candidates
from loom.model.build import build_problem

GEGLU = Path(__file__).parents[2] / "benchmarks" / "families" / "geglu_mlp.py"
SHAPE = {"M": 128, "N": 128, "K": 256}
BLOCKS = {"tile_m": 64, "tile_n": 64, "tile_k": 64}  # four K steps


@functools.cache
def _geglu() -> KernelSpec:
    return resolve_kernel(str(GEGLU))


def _program(kernel: str) -> TileProgram:
    """Both kernels take the family's inputs (x, wg, wu)."""
    fn = _geglu().kernel if kernel == "geglu" else two_products
    return import_kernel(fn, _geglu().make_inputs(SHAPE))


def _offered(buffered: BufferedProgram) -> list[dict[str, str]]:
    """Every combination of placements the model's knobs range over (first candidate)."""
    arch = load_arch("wormhole_n150")
    cand = enumerate_candidates(buffered, arch).candidates[0]
    domains = build_problem(buffered, cand, arch, "HiFi2", 0).domains
    accs = buffered.accumulators
    choices = [[PLACEMENTS[x] for x in domains[a.knob]] for a in accs]
    return [{a.state: p for a, p in zip(accs, c, strict=True)} for c in itertools.product(*choices)]


def _lowered(tile: TileProgram, buffered: BufferedProgram, placed: dict[str, str]) -> Program:
    schedule = make_schedule(tile, "wormhole_n150", MN, BLOCKS)
    schedule = dataclasses.replace(schedule, accumulators=placed)
    return lower(tile, buffered, schedule, load_arch("wormhole_n150"))


@pytest.mark.parametrize("policy", ["strict", "output"])
@pytest.mark.parametrize("kernel", ["geglu", "two_products"])
def test_every_offered_placement_lowers(kernel: str, policy: str) -> None:
    tile = _program(kernel)
    buffered = build_buffers(tile, policy)
    assert len(buffered.accumulators) == 2
    offered = _offered(buffered)
    assert len(offered) >= 4  # separate and l1 each, at least
    for placed in offered:
        program = _lowered(tile, buffered, placed)
        adds = [
            s.dst
            for s in walk_stmts(program.compute)
            if isinstance(s, Compute) and s.accumulate and not isinstance(s.expr, FillExpr)
        ]
        held = sorted(s for s, p in placed.items() if p == "l1")
        assert sorted(adds) == held, placed  # one add per K step into each held block


def test_both_held_run_on_tt_lang_sim(tmp_path: Path) -> None:
    """GeGLU (each matmul loads x) and the shared-operand kernel (one x block feeds both
    steps, which stand inside its wait), both accumulators held, match torch."""
    args = _geglu().make_inputs(SHAPE)
    x, wg, wu = (a.float() for a in args)
    references = {
        "geglu": {"out": _geglu().reference(*args)},
        "two_products": {"g_out": (x @ wg).to(args[0].dtype), "u_out": (x @ wu).to(args[0].dtype)},
    }
    for kernel, refs in references.items():
        tile = _program(kernel)
        buffered = build_buffers(tile, "strict")
        program = _lowered(tile, buffered, {a.state: "l1" for a in buffered.accumulators})
        result = verify_outputs(program, args, refs, str(tmp_path / f"{kernel}.py"))
        assert result.passed, result.message
