"""Accumulator placements in the lowering, and each realization run on tt-lang-sim."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from cases import MN
from programs import _reference
from schedules import kernel_program, make_schedule

from loom.arch import load_arch
from loom.backends.ttlang import TOLERANCE, verify
from loom.backends.ttlang.runner import accumulation_steps, accumulation_tolerance
from loom.dataflow import build_buffers
from loom.errors import ScheduleError
from loom.ir.program import Compute, FillExpr, Loop, Program, Reserve, Stmt, Wait
from loom.lower import lower

SHAPE = (("K", 512), ("M", 512), ("N", 512))
BLOCKS = {"tile_m": 64, "tile_n": 64, "tile_k": 128}  # four K steps


def _lowered(placement: str, policy: str) -> Program:
    tile = kernel_program("gemm", SHAPE)
    schedule = make_schedule(
        tile, "wormhole_n150", MN, BLOCKS, {"loop:tile_k": {"b_load": 1}}, ("a", "b")
    )
    schedule = dataclasses.replace(schedule, accumulators={"acc": placement})
    return lower(tile, build_buffers(tile, policy), schedule, load_arch("wormhole_n150"))


def _accumulating(body: tuple[Stmt, ...]) -> list[Compute]:
    found: list[Compute] = []
    for s in body:
        if isinstance(s, Compute) and s.accumulate:
            found.append(s)
        for inner in (getattr(s, "body", None), getattr(s, "then", None)):
            if isinstance(inner, tuple):
                found.extend(_accumulating(inner))
    return found


def test_separate_keeps_two_state_blocks() -> None:
    program = _lowered("separate", "strict")
    depth = {b.name: b.depth for b in program.buffers}
    assert depth["acc"] == 2 and depth["out_out"] == 1
    assert not _accumulating(program.compute)


def test_l1_holds_one_fp32_block_across_the_k_loop() -> None:
    program = _lowered("l1", "strict")
    acc = next(b for b in program.buffers if b.name == "acc")
    assert (acc.depth, acc.dtype) == (1, "fp32")
    steps = _accumulating(program.compute)
    assert {s.dst for s in steps} == {"acc"}
    assert isinstance(steps[0].expr, FillExpr) and len(steps) == 2  # start, add
    held = _reserve_of(program.compute, "acc")
    assert held is not None and any(isinstance(s, Loop) for s in held.body)
    assert accumulation_steps(program) == 0  # fp32: no precision relaxation


def test_output_accumulates_in_the_store_block() -> None:
    program = _lowered("output", "output")
    assert "acc" not in {b.name for b in program.buffers}
    assert {s.dst for s in _accumulating(program.compute)} == {"out_out"}
    loop = next(s for s in _reserve_of(program.compute, "out_out").body if isinstance(s, Loop))
    assert isinstance(loop.body[0], Wait) and "out_out" not in loop.body[0].buffers
    assert accumulation_steps(program) == 4  # 512 / 128 K blocks
    assert accumulation_tolerance(program) == 4 * 2.0**-8


def test_output_needs_the_output_policy() -> None:
    with pytest.raises(ScheduleError, match="--accumulate"):
        _lowered("output", "strict")


def _reserve_of(body: tuple[Stmt, ...], buffer: str) -> Reserve:
    for s in body:
        if isinstance(s, Reserve) and s.buffer == buffer and _accumulating(s.body):
            return s
        inner = getattr(s, "body", None)
        if isinstance(inner, tuple):
            found = _reserve_of(inner, buffer)
            if found is not None:
                return found
    return None  # type: ignore[return-value]


@pytest.mark.parametrize(("placement", "policy"), [("l1", "strict"), ("output", "output")])
def test_placement_runs_on_tt_lang_sim(placement: str, policy: str, tmp_path: Path) -> None:
    """The kernel runs and matches torch: fp32 (l1) within the bf16 output's rounding;
    bf16 partial sums (output), simulated in bf16 arithmetic, within that rounding plus one
    bf16 rounding of each of the 4 partial sums."""
    program = _lowered(placement, policy)
    inputs, ref = _reference("gemm", SHAPE)
    result = verify(program, inputs, ref, str(tmp_path / "kernel.py"))
    assert result.passed, result.message
    source = (tmp_path / "kernel.py").read_text()
    target = "acc" if placement == "l1" else "out_out"
    assert f"{target}_acc += a_tile_rd @ b_tile_rd" in source
    if placement == "output":
        assert result.tolerance == TOLERANCE["bf16"] + 4 * 2.0**-8
        assert result.max_rel_error > 0  # the partial sums were rounded to bf16
    else:
        assert result.tolerance == TOLERANCE["bf16"]


def test_schedule_file_keeps_the_placement() -> None:
    from loom.ir.schedule_file import parse_schedule

    tile = kernel_program("gemm", SHAPE)
    schedule = make_schedule(tile, "wormhole_n150", MN, BLOCKS)
    schedule = dataclasses.replace(schedule, shape=dict(SHAPE))
    placed = dataclasses.replace(schedule, accumulators={"acc": "output"})
    assert parse_schedule(placed.to_json(), "test").accumulators == {"acc": "output"}
    assert "accumulators" not in schedule.to_json()  # none chosen: the file is as before
