"""TTNN's automatic matmul config for DRAM-interleaved operands (the out-of-box tables)."""

from __future__ import annotations

from loom.baselines.ttnn_matmul_oob import oob_matmul_config, out_block, subblock


def test_square_shapes_take_the_2d_multicast_on_the_whole_grid() -> None:
    c = oob_matmul_config(2560, 3328, 3328, 13, 10, "bf16", "blackhole_p150_13x10")
    assert (c.kind, c.grid_x, c.grid_y) == ("mcast_2d", 13, 10)
    assert (c.per_core_m, c.per_core_n, c.in0_block_w) == (8, 8, 8)  # Mt/10, Nt/13, Kt/13
    assert (c.out_subblock_h, c.out_subblock_w) == (4, 2)
    assert (c.math_fidelity, c.fp32_dest_acc) == ("LoFi", False)


def test_k_not_divisible_by_the_grid_width_uses_in0_block_w_1() -> None:
    c = oob_matmul_config(1024, 1056, 1024, 8, 8, "bf16", "wormhole_n150")
    assert c.kind == "mcast_2d" and c.in0_block_w == 1  # Kt = 33


def test_large_per_core_blocks_are_split_to_fit_l1() -> None:
    c = oob_matmul_config(5120, 6656, 6656, 13, 10, "bf16", "blackhole_p150_13x10")
    assert (c.per_core_m, c.per_core_n) == (16, 16)
    bh, bw, k = out_block(c.per_core_m, c.per_core_n, 16, "bf16", "blackhole_p150_13x10")
    assert (bh, bw, k) == (8, 8, 16) and c.in0_block_w == 16


def test_narrow_shapes_take_a_1d_multicast() -> None:
    wide = oob_matmul_config(64, 1024, 8192, 8, 8, "bf16", "wormhole_n150")
    assert wide.kind == "mcast_1d_in0" and wide.per_core_m == 2 and wide.per_core_n == 4
    tall = oob_matmul_config(8192, 1024, 64, 8, 8, "bf16", "wormhole_n150")
    assert tall.kind == "mcast_1d_in1" and tall.per_core_n == 2


def test_subblocks_follow_ttnn_preference_and_fp32_limit() -> None:
    assert subblock(8, 8, False) == (4, 2)
    assert subblock(8, 8, True) == (2, 2)
    assert subblock(3, 5, False) == (1, 5)
