"""`ttnn-matmul-tuned` for every GEMM shape: TTNN's 2-D multicast configs on the whole
grid, in0_block_w among Kt's largest divisors up to 16, the largest out block whose CBs
fit L1 under the 2-D factory's rule (matmul_multicore_reuse_mcast_2d_program_factory.cpp
@ 043b5ac). Every expected value below is worked by hand from that rule."""

from __future__ import annotations

from loom.baselines.ttnn_matmul_tuned import (
    factory_sizes,
    in0_block_widths,
    matmul_tuned_candidates,
    tuned_configs,
)

WH, BH = "wormhole_n150", "blackhole_p150_13x10"


def _blocks(policies) -> list[tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    return [(p.block_sizes["tile_m"] // 32, p.block_sizes["tile_n"] // 32,
             p.block_sizes["tile_k"] // 32) for p in policies]  # fmt: skip


def test_the_factory_cb_rule_shares_the_output_and_intermediate_cb() -> None:
    """8 x 8 out block, in0_block_w 16: in0 2 x 8 x 16 + in1 2 x 8 x 16 + out 64 = 576
    bf16 tiles = 1,179,648 B, within Wormhole's 1,398,784; 16 x 8 at 16 needs 896 tiles
    (1,835,008 B): it does not fit."""
    sizes = factory_sizes(WH)
    assert sizes.cbs(8, 8, 16) == 1_179_648 and sizes.fits(8, 8, 16)
    assert sizes.cbs(16, 8, 16) == 1_835_008 and not sizes.fits(16, 8, 16)
    assert in0_block_widths(64) == (16, 8, 4, 2)
    assert in0_block_widths(8) == (8, 4, 2, 1)
    assert in0_block_widths(104) == (13, 8, 4, 2)


def test_wormhole_2048_cube_has_the_published_config_first_and_three_more_k_blocks() -> None:
    """M = N = K = 2048 on 8 x 8: per core 64 / 8 = 8 x 8 tiles, every in0_block_w of
    (16, 8, 4, 2) fits the whole 8 x 8 out block; the published manual config (in0_block_w
    8) comes first and the enumerated one with the same blocks is not offered twice."""
    policies = matmul_tuned_candidates({"M": 2048, "N": 2048, "K": 2048}, WH, (8, 8))
    assert _blocks(policies) == [(8, 8, 8), (8, 8, 16), (8, 8, 4), (8, 8, 2)]
    assert "GEMM_FLOPS.md" in policies[0].notes[1]
    assert all(p.name == "ttnn-matmul-tuned" and p.accumulate == "output" for p in policies)


def test_tall_shape_shrinks_the_out_block_as_the_k_block_grows() -> None:
    """M = 16384, N = K = 2048 on 8 x 8 (no published config): per core 64 x 8. In TTNN's
    order (largest area, then squarest): in0_block_w 16 fits 8 x 8 (576 tiles; 16 x 8 needs
    896), 8 fits 16 x 8 (256 + 128 + 128 = 512 tiles), 4 fits 32 x 8 (256 + 64 + 256 =
    576), 2 still 32 x 8 (64 x 8 needs 256 + 32 + 512 = 800 tiles = 1,638,400 B)."""
    policies = matmul_tuned_candidates({"M": 16384, "N": 2048, "K": 2048}, WH, (8, 8))
    assert _blocks(policies) == [(8, 8, 16), (16, 8, 8), (32, 8, 4), (32, 8, 2)]
    assert all(p.view == (("y", 8, "tile_m"), ("x", 8, "tile_n")) for p in policies)


def test_blackhole_tries_both_orientations_of_its_13_x_10_grid() -> None:
    """M = N = K = 2048 on 13 x 10: rows own M, per core ceil(64 / 10) x ceil(64 / 13) =
    7 x 5 (10 rows, 13 columns busy); transpose_mcast puts M on the 13 columns, 5 x 7.
    Both fit whole at every in0_block_w: 8 candidates."""
    configs = tuned_configs({"M": 2048, "N": 2048, "K": 2048}, BH, (13, 10))
    assert [(c.per_core_m, c.per_core_n, c.transpose_mcast) for c, _ in configs] == [
        (7, 5, False)
    ] * 4 + [(5, 7, True)] * 4
    policies = matmul_tuned_candidates({"M": 2048, "N": 2048, "K": 2048}, BH, (13, 10))
    assert len(policies) == 8
    assert policies[0].view == (("y", 10, "tile_m"), ("x", 13, "tile_n"))
    assert policies[4].view == (("x", 13, "tile_m"), ("y", 10, "tile_n"))
    assert "transpose_mcast" in policies[4].notes[0]
