"""TTNN's out-of-box matmul rule (create_simple_matmul_program_config, all DRAM
interleaved) on cases worked through its source by hand, one per branch."""

from __future__ import annotations

import pytest

from loom.baselines.ttnn_matmul_oob import (
    TtnnMatmulConfig,
    is_narrow,
    oob_matmul_config,
    out_block,
)

WH, BH = "wormhole_n150", "blackhole_p150_13x10"


def test_square_gemm_on_wormhole_is_2d_mcast_with_k_split_by_grid_columns() -> None:
    # Kt = 128, 8 columns -> in0_block_w 16; per core 16 x 16 tiles; the CBs of a 16 x 16
    # block do not fit, the 8 x 8 block at in0_block_w 16 does (1,310,720 B < L1)
    cfg = oob_matmul_config(4096, 4096, 4096, 8, 8, "bf16", WH)
    assert cfg == TtnnMatmulConfig("mcast_2d", 8, 8, 16, 16, 16, 4, 2, False, "LoFi", False)
    assert out_block(cfg, "bf16", WH) == (8, 8)


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
    assert out_block(cfg, "BFLOAT8_B", WH) == (8, 16)
