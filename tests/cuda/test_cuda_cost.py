"""The CUDA path's launch model: the terms that follow what the simulator shows for a
launch on an uneven grid (jacobi N=512: 16x16 tiles on the 10x13 grid)."""

from __future__ import annotations

import pytest

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.cuda.cost import launch_cost
from loom.flows.cuda import CudaOptions, compile_cuda, launches

ARCH = load_arch("blackhole_p150_13x10")


def _first_launch(ann: dict, n: str = "512"):  # type: ignore[no-untyped-def, type-arg]
    c = compile_cuda(
        "examples/cuda/jacobi_2d.cu",
        CudaOptions(ARCH, "bf16", (("N", n), ("TSTEPS", "1")), parse_annotations(ann, "test")),
    )
    (_, lp), *_ = launches(c)
    assert c.physical is not None
    return c.physical, lp


def test_edge_tiles_gather_on_the_busiest_core() -> None:
    """A core takes every 10th tile row and 13th column: core (0, 0) owns rows 0 and 10,
    columns 0 and 13, and three of its four tiles touch the guard's edge (row 0 or
    column 0), against the grid's average of one."""
    _, lp = _first_launch({})
    assert lp.program.grid == (10, 13) and lp.shape == (16, 16)
    assert lp.cut_tiles == 60
    assert lp.busiest_cut_tiles == 3
    _, every = _first_launch({"tileplan": {"predicates": "all"}})
    assert every.busiest_cut_tiles == 4


def test_constant_preamble_waits_for_one_bank_serving_every_core() -> None:
    """Every core reads the same constant pages before its tiles: each page's bank
    serves all 130 copies after the read latency, so the launch is never shorter than
    that queue for each held constant."""
    phys, lp = _first_launch({})
    tb = ARCH.tile.bytes("bf16")
    rate = ARCH.dram.bank_bytes_per_cycle * ARCH.dram.efficiency
    queue = ARCH.dram.read_latency_cycles + 130 * tb / rate
    assert max(lp.const_senders) == 8
    assert launch_cost(phys, lp, ARCH).cycles > 8 * queue


@pytest.mark.parametrize("ann", [{}, {"tileflow": {"halo_conversion": "sender"}}])
def test_uneven_grid_costs_more_per_tile_than_its_average_share(ann: dict) -> None:  # type: ignore[type-arg]
    """On the uneven grid every sender-side halo is read from DRAM by its receiver (no
    core owns it in the same trip), so the sender-side set reads as much per tile as
    the receiver-side one."""
    phys, lp = _first_launch(ann)
    read = (
        ARCH.dram.read_latency_cycles + ARCH.tile.bytes("bf16") / ARCH.dram.reader_bytes_per_cycle
    )
    assert launch_cost(phys, lp, ARCH).dm0 == pytest.approx(5 * read)


def test_one_tile_shards_keep_their_masked_tiles_for_the_column_cost() -> None:
    """At N=256 a row-streamed launch has one-tile shards (8 tile columns on 13 grid
    columns) and is costed per tile; its masked tiles are those of its masked shard rows."""
    _, col = _first_launch({}, "256")
    _, row = _first_launch({"task": {"streaming": "row"}}, "256")
    assert row.shape[1] <= row.program.grid[1]
    assert row.busiest_cut_tiles == row.busiest_cut_rows > 0
    assert row.busiest_cut_tiles == col.busiest_cut_tiles


def test_a_fused_factor_column_is_paid_once_per_tile_row_trip() -> None:
    """gaussian fused at N=512: 16 tile columns on 13 core columns, two column passes per
    tile row. The factor's tile is delivered once per row trip (the lowering holds it
    across the passes), so the model charges it to the first pass of each trip and
    counts one DRAM read per tile row: less than charging it to every tile."""
    from dataclasses import replace

    c = compile_cuda(
        "examples/cuda/gaussian.cu",
        CudaOptions(
            ARCH,
            "bf16",
            (("N", "512"),),
            parse_annotations({"tileplan": {"fuse": ["Fan1", "Fan2"]}}, "t"),
        ),
    )
    (_, lp), *_ = launches(c, 2)
    assert c.physical is not None
    assert lp.shape == (16, 16) and lp.program.grid == (10, 13) and lp.row_held == ("a_r_xt",)
    held = launch_cost(c.physical, lp, ARCH)
    per_tile = launch_cost(c.physical, replace(lp, row_held=()), ARCH)
    assert held.cycles < per_tile.cycles
    assert held.dm0 < per_tile.dm0  # the per-pass reads leave it out
