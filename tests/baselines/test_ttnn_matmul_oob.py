"""TTNN's out-of-box matmul rule (create_simple_matmul_program_config, all DRAM
interleaved) on cases worked through its source by hand, one per branch."""

from __future__ import annotations

import pytest

from loom.baselines.ttnn_matmul_oob import (
    TtnnMatmulConfig,
    is_narrow,
    oob_matmul_config,
    out_block,
    subblock,
)

WH, BH = "wormhole_n150", "blackhole_p150_13x10"


def test_square_gemm_on_wormhole_is_2d_mcast_with_k_split_by_grid_columns() -> None:
    # Kt = 128, 8 columns -> in0_block_w 16; per core 16 x 16 tiles; the CBs of a 16 x 16
    # block do not fit, the 8 x 8 block at in0_block_w 16 does (1,310,720 B < L1)
    cfg = oob_matmul_config(4096, 4096, 4096, 8, 8, "bf16", WH)
    assert cfg == TtnnMatmulConfig("mcast_2d", 8, 8, 16, 16, 16, 4, 2, False, "LoFi", False)
    assert out_block(cfg.per_core_m, cfg.per_core_n, cfg.in0_block_w, "bf16", WH) == (8, 8, 16)


def test_blackhole_13_columns_do_not_divide_k_so_in0_block_w_is_one() -> None:
    # Kt = 64 is not a multiple of 13; per core ceil(64/10) x ceil(64/13) = 7 x 5; the
    # first subblock dividing (7, 5) is (7, 1)
    cfg = oob_matmul_config(2048, 2048, 2048, 13, 10, "bf16", BH)
    assert (cfg.kind, cfg.in0_block_w, cfg.per_core_m, cfg.per_core_n) == ("mcast_2d", 1, 7, 5)
    assert (cfg.out_subblock_h, cfg.out_subblock_w) == (7, 1)


def test_tall_narrow_gemm_multicasts_b_over_the_whole_chip() -> None:
    # The Loom paper (3.2.1): on Blackhole TTNN broadcasts one operand across the entire
    # chip for (16K, 256, 2K). 16384 / 256 = 64 > 8: tall -> 1-D in1 multicast with
    # per_core_M = ceil(ceil(16384 / 130) / 32) = 4 and all of N per core
    cfg = oob_matmul_config(16384, 2048, 256, 13, 10, "bf16", BH)
    assert (cfg.kind, cfg.per_core_m, cfg.per_core_n, cfg.in0_block_w) == (
        "mcast_1d_in1",
        4,
        8,
        2,
    )
    wide = oob_matmul_config(256, 2048, 16384, 8, 8, "bf16", WH)
    assert (wide.kind, wide.per_core_m, wide.per_core_n) == ("mcast_1d_in0", 8, 8)


def test_smallest_gemm_gets_one_tile_per_core() -> None:
    cfg = oob_matmul_config(256, 256, 256, 8, 8, "bf16", WH)
    assert (cfg.kind, cfg.per_core_m, cfg.per_core_n, cfg.in0_block_w) == ("mcast_2d", 1, 1, 1)


@pytest.mark.parametrize(
    ("height", "width", "narrow"),
    [(16384, 256, True), (2048, 256, False), (256, 2048, False), (32, 4096, True)],
)
def test_narrow_threshold_is_a_ratio_above_eight(height: int, width: int, narrow: bool) -> None:
    assert is_narrow(height, width) is narrow


def test_block_float_dtypes_use_their_tile_size() -> None:
    cfg = oob_matmul_config(4096, 4096, 4096, 8, 8, "BFLOAT8_B", WH)
    # bfp8 tiles (1088 B) leave room for 128 output tiles at in0_block_w 16; of the two
    # equally square factorisations TT-Metal keeps the later one, 8 x 16
    assert out_block(16, 16, cfg.in0_block_w, "BFLOAT8_B", WH) == (8, 16, 16)


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
