"""Schedules the lowering cannot honour are rejected with a ScheduleError that says why."""

from __future__ import annotations

import dataclasses

import pytest
from cases import FAST
from programs import lowered
from schedules import make_schedule

from loom.arch import load_arch
from loom.dataflow import build_buffers
from loom.errors import ScheduleError
from loom.ir.program import Reserve, Wait
from loom.lower import check_program, lower

CASES = {c.id: c for c in FAST}


def _lower(case_id: str, **changes: object) -> None:
    case = dataclasses.replace(CASES[case_id], **changes)
    tile = case.program()
    lower(tile, build_buffers(tile), case.schedule(), load_arch(case.arch))


def test_grid_axes_are_padded_to_whole_waves() -> None:
    """96-row tiles over 8 cores: 6 tiles of 512 rows fill one wave of 8 blocks, so the
    DRAM tensors of A and C are padded to 8 * 96 = 768 rows (zeros in, cropped out)."""
    case = dataclasses.replace(
        CASES["gemm512-wh-unicast-1buf"], blocks={"tile_m": 96, "tile_n": 64, "tile_k": 128}
    )
    tile = case.program()
    program = lower(tile, build_buffers(tile), case.schedule(), load_arch(case.arch))
    shapes = {t.name: (t.stored_shape, t.rows, t.cols) for t in program.tensors}
    assert shapes == {
        "a": ((768, 512), 24, 16),
        "b": ((512, 512), 16, 16),
        "out": ((768, 512), 24, 16),
    }


def test_mapping_must_fit_the_grid() -> None:
    view = {"y": [(8, "tile_m")], "x": [(16, "tile_n")]}
    with pytest.raises(ScheduleError, match="more than the 8x8 grid"):
        _lower(
            "gemm512-wh-unicast-1buf", view=view, blocks={"tile_m": 64, "tile_n": 32, "tile_k": 128}
        )


def test_split_axis_must_run_in_one_wave() -> None:
    view = {"y": [(4, "tile_s")], "x": [(8, "tile_b")]}
    with pytest.raises(ScheduleError, match="split axis tile_s runs in 2 waves"):
        _lower("fd-wh-split8-one-step", view=view)


def test_attention_batch_blocks_must_be_one() -> None:
    blocks = {"tile_b": 2, "tile_m": 64, "tile_n": 64}
    view = {"x": [(8, "tile_m")]}
    with pytest.raises(ScheduleError, match="batch"):
        _lower("fa-d64-wh-unicast-1buf", blocks=blocks, view=view)


def test_schedule_for_another_arch_is_rejected() -> None:
    case = CASES["gemm512-wh-unicast-1buf"]
    tile = case.program()
    with pytest.raises(ScheduleError, match="targets 'wormhole_n150', not 'blackhole_p150'"):
        lower(tile, build_buffers(tile), case.schedule(), load_arch("blackhole_p150"))


def test_missing_copies_are_rejected() -> None:
    case = CASES["gemm512-wh-unicast-1buf"]
    tile = case.program()
    sched = make_schedule(tile, case.arch, case.view, case.blocks)
    sched = dataclasses.replace(sched, copies=sched.copies[:2])
    with pytest.raises(ScheduleError, match="has 3 loads/stores/gathers"):
        lower(tile, build_buffers(tile), sched, load_arch(case.arch))


def test_waves_are_read_from_the_schedule_and_must_match_its_blocks() -> None:
    """Lowering runs the waves the mapping derived; a block size edited without them is
    rejected by name, not lowered with a wrong wave count."""
    case = CASES["gemm512-wh-unicast-1buf"]
    tile = case.program()
    sched = make_schedule(tile, case.arch, case.view, case.blocks)
    edited = dataclasses.replace(sched, waves={**sched.waves, "tile_m": sched.waves["tile_m"] + 1})
    with pytest.raises(ScheduleError, match=r"the schedule's waves .*tile_m=\d+.* do not match"):
        lower(tile, build_buffers(tile), edited, load_arch(case.arch))
    with pytest.raises(ScheduleError, match=r"waves \(none\) do not match"):
        lower(tile, build_buffers(tile), dataclasses.replace(sched, waves={}), load_arch(case.arch))


def test_check_program_rejects_a_buffer_held_twice() -> None:
    p = lowered(CASES["gemm512-wh-unicast-1buf"])
    bad = dataclasses.replace(p, compute=(Wait(("acc",), p.compute),))
    with pytest.raises(ScheduleError, match="'acc' is waited while a block is held"):
        check_program(bad)


def test_check_program_rejects_a_copy_outside_its_reserve() -> None:
    p = lowered(CASES["gemm512-wh-unicast-1buf"])
    (load,) = p.reader[0].body  # loop tile_k: reserve a_tile: read a
    assert isinstance(load, Reserve)
    bad = dataclasses.replace(p, reader=(load.body[0],))
    with pytest.raises(ScheduleError, match="outside its reserve"):
        check_program(bad)


def test_a_core_holds_the_architecture_s_dataflow_buffers() -> None:
    """GEMM lowers to 4 circular buffers; a core that holds 3 cannot take the schedule."""
    case = CASES["gemm512-wh-unicast-1buf"]
    tile = case.program()
    arch = dataclasses.replace(load_arch(case.arch), dataflow_buffers=3)
    with pytest.raises(ScheduleError, match="needs 4 dataflow buffers per core, more than the 3"):
        lower(tile, build_buffers(tile), case.schedule(), arch)
