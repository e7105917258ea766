"""The accumulator placement knob in the model: L1 footprint and legality of each
placement, and what each costs to pack."""

from __future__ import annotations

import pytest

from loom.dataflow import build_buffers
from loom.mapping import enumerate_candidates
from loom.model.build import build_problem

FP32, BF16 = 4096, 2048


@pytest.fixture(scope="module")
def problems(tile_programs, wormhole):  # type: ignore[no-untyped-def]
    out = {}
    for policy in ("strict", "output"):
        buffered = build_buffers(tile_programs["gemm"], policy)
        cand = enumerate_candidates(buffered, wormhole).candidates[0]
        out[policy] = build_problem(buffered, cand, wormhole, "HiFi2", 0)
    return out


def _env(problem, m: int, n: int, k: int, placement: int) -> dict[str, int]:  # type: ignore[no-untyped-def]
    env = {"tile_m": m, "tile_n": n, "tile_k": k, "acc_acc": placement}
    for knob in problem.knob_names:
        env.setdefault(knob, 1 if knob.startswith("b_load") and 1 in problem.domains[knob] else 0)
    return env


def test_placement_domains(problems) -> None:  # type: ignore[no-untyped-def]
    assert problems["strict"].domains["acc_acc"] == (0, 1)
    assert problems["output"].domains["acc_acc"] == (0, 1, 2)


@pytest.mark.parametrize(("placement", "acc_bytes"), [(0, 2 * FP32), (1, FP32), (2, 0)])
def test_l1_footprint_of_each_placement(problems, placement: int, acc_bytes: int) -> None:  # type: ignore[no-untyped-def]
    p = problems["output"]
    env = _env(p, 64, 64, 128, placement)
    tiles, k_tiles = 2 * 2, 4
    loads = 2 * (2 * k_tiles + k_tiles * 2) * BF16  # a and b, double-buffered
    out = tiles * BF16 * (1 + env.get("b_store_grid", 0))
    assert p.l1_bytes.eval(env) == loads + out + tiles * acc_bytes


def test_ttnn_blocks_need_the_output_placement(problems, wormhole) -> None:  # type: ignore[no-untyped-def]
    """TTNN's N150 block for 3072x4096x3072 (384x512, K block 192, packer-accumulated bf16
    partials in the output block) fits L1 only with the accumulator in the output block;
    its 2048x3072x2048 block (256x384, K 256) already fits with one fp32 block (l1)."""
    p, cap = problems["output"], wormhole.l1_usable_bytes
    fits = [p.l1_bytes.eval(_env(p, 384, 512, 192, x)) <= cap for x in (0, 1, 2)]
    assert fits == [False, False, True]
    fits = [p.l1_bytes.eval(_env(p, 256, 384, 256, x)) <= cap for x in (0, 1, 2)]
    assert fits == [False, True, True]


def test_pack_rate_of_each_placement(wormhole) -> None:  # type: ignore[no-untyped-def]
    c = wormhole.compute
    assert c.pack_cycles(FP32) == 64  # separate: a plain write of an fp32 tile
    assert c.pack_accumulate_cycles(FP32) == 128  # l1: read-modify-write of L1
    assert c.pack_accumulate_cycles(BF16) == 64  # output: the bf16 tile added into L1


def test_model_charges_the_accumulating_pack(problems) -> None:  # type: ignore[no-untyped-def]
    """A tiny K block makes the step pack-bound: l1 (fp32 added into L1) is the slowest
    placement, output (bf16 added into L1) no slower than separate."""
    p = problems["output"]
    cycles = [p.objective.eval(_env(p, 256, 256, 32, x)) for x in (0, 1, 2)]
    assert cycles[1] > cycles[0] >= cycles[2]


def test_only_the_output_placement_skips_the_final_copy(problems, wormhole) -> None:  # type: ignore[no-untyped-def]
    """separate and l1 copy the fp32 state into the bf16 store block after the K loop
    (unpack each fp32 tile, pack it as bf16); output accumulates in that block."""
    p = problems["output"]
    c = wormhole.compute
    tiles = 2 * 2
    copy = tiles * max(c.unpack_cycles(FP32), c.pack_cycles(BF16))
    copy += c.op_overhead_cycles + c.pack_cycles(BF16)
    # a K block deep enough that every placement's step is unpack-bound, so separate's
    # and output's steps cost the same and the difference is the copy
    envs = [_env(p, 64, 64, 256, x) for x in (0, 1, 2)]
    cycles = [p.objective.eval(env) for env in envs]
    waves = p.heg.children[1].trip.eval(envs[2])  # once per output block
    assert cycles[0] - cycles[2] == waves * copy
    assert cycles[1] - cycles[2] >= waves * copy  # l1 also drains an fp32 add into L1
