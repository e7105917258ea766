"""TTNN's norms, softmax and eltwise ops: each rule gives its factory's cores, block and
path on documented cases, and its Schedule lowers through Loom's lowering."""

from __future__ import annotations

import pytest

from loom.arch import load_arch
from loom.baselines.ttnn_layer import (
    TtnnRefusal,
    eltwise_policy,
    eltwise_view,
    find_max_divisor,
    norm_cb_bytes,
    norm_rule,
    row_policy,
    softmax_rule,
    split_work,
)

WH, BH = "wormhole_n150", "blackhole_p150_13x10"
WH_GRID, BH_GRID = (8, 8), (13, 10)


def _l1(arch: str) -> tuple[int, int]:
    a = load_arch(arch)
    return a.l1_usable_bytes, a.l1_bytes


def _cores(view) -> int:  # type: ignore[no-untyped-def]
    n = 1
    for _, size, _ in view:
        n *= size
    return n


@pytest.mark.parametrize(
    ("units", "cores", "split"),
    [
        (32, 64, (32, 1, 1)),  # fewer tile rows than cores: one each
        (256, 64, (64, 4, 4)),  # an even split
        (256, 130, (130, 2, 1)),  # 126 cores take 2, the other 4 take 1
        (16384, 130, (130, 127, 126)),
    ],
)
def test_split_work_is_split_work_to_cores(units, cores, split) -> None:  # type: ignore[no-untyped-def]
    got = split_work(units, cores)
    assert (got.cores, got.most, got.least) == split
    # the units all land: `units % cores` cores take the larger share
    more = units % got.cores
    assert got.most * more + got.least * (got.cores - more) == units or got.most == got.least


@pytest.mark.parametrize(("n", "most", "d"), [(64, 8, 8), (96, 8, 8), (100, 8, 5), (7, 8, 7)])
def test_find_max_divisor(n, most, d) -> None:  # type: ignore[no-untyped-def]
    assert find_max_divisor(n, most) == d


@pytest.mark.parametrize(
    ("kernel", "shape", "arch", "cores", "rows", "large"),
    [
        # hidden 2048 (Wt = 64): RMSNorm's CBs are 238 bf16 tiles = 487,424 B, resident
        ("rms_norm", {"M": 1024, "N": 2048}, WH, 32, 1, 0),
        # 8192 tokens = 256 tile rows on 64 cores: 4 each
        ("rms_norm", {"M": 8192, "N": 4096}, WH, 64, 4, 0),
        # LayerNorm keeps fp32 intermediates (its default fp32_dest_acc_en): at 4096 its
        # CBs (1,941,504 B) overflow L1 and the large-tensor kernel's 56-tile CBs run
        ("layer_norm", {"M": 1024, "N": 4096}, BH, 32, 1, 56),
        ("layer_norm", {"M": 8192, "N": 2048}, BH, 130, 2, 0),
    ],
)
def test_norm_rule(kernel, shape, arch, cores, rows, large) -> None:  # type: ignore[no-untyped-def]
    grid = WH_GRID if arch == WH else BH_GRID
    rule = norm_rule(kernel, shape, grid[0] * grid[1], _l1(arch)[0])
    assert (rule.split.cores, rule.split.most, rule.large_cb_tiles) == (cores, rows, large)
    assert rule.block_size == (8 if kernel == "rms_norm" else 4)


def test_norm_cbs_count_the_factorys_buffers() -> None:
    # RMSNorm, Wt = 64, block 8: in0 64 + out0 16 + x^2 64 + gamma 64 + im5 16 + im4 8 +
    # scaler 2 + eps 2 + im2 2 = 238 bf16 tiles
    assert norm_cb_bytes("rms_norm", 64) == (8, 238 * 2048)
    # LayerNorm, Wt = 64, block 4: bf16 in0 64 + out0 8 + gamma 64 + beta 64 + scaler 2 +
    # eps 2 = 204 tiles, fp32 x^2 64 + im5 8 + im4 8 + im2 2 + xmm 64 + im1 2 = 148 tiles
    assert norm_cb_bytes("layer_norm", 64) == (4, 204 * 2048 + 148 * 4096)


def test_rms_norm_past_l1_is_refused_as_ttnn_refuses_it() -> None:
    # hidden 8192: 814 tiles of CBs and no large-tensor path for RMSNorm at 5aa66d6b
    with pytest.raises(TtnnRefusal, match="no large-tensor path"):
        norm_rule("rms_norm", {"M": 1024, "N": 8192}, 64, _l1(WH)[0])


@pytest.mark.parametrize(
    ("shape", "arch", "cores", "block", "large"),
    [
        ({"M": 1024, "N": 2048}, WH, 32, 8, 0),  # 3 x 64 tiles + 21: resident
        ({"M": 8192, "N": 4096}, BH, 130, 8, 0),  # 405 tiles < 90% of L1
        ({"M": 1024, "N": 8192}, WH, 32, 8, 80),  # 789 tiles > 90%: the large kernel
        ({"M": 2048, "N": 100 * 32}, WH, 64, 5, 0),  # Wt = 100: find_max_divisor(100, 8)
    ],
)
def test_softmax_rule(shape, arch, cores, block, large) -> None:  # type: ignore[no-untyped-def]
    grid = WH_GRID if arch == WH else BH_GRID
    rule = softmax_rule(shape, grid[0] * grid[1], _l1(arch)[1])
    assert (rule.split.cores, rule.block_size, rule.large_cb_tiles) == (cores, block, large)


def test_row_policy_writes_the_rule_as_a_schedule() -> None:
    usable, total = _l1(BH)
    policy = row_policy("rms_norm", {"M": 8192, "N": 4096}, BH_GRID, usable, total)
    assert policy.block_sizes == {"tile_m": 32}
    assert policy.realization == "persistent"
    assert policy.multicast == ("w",)
    assert _cores(policy.view) == 130
    looped = row_policy("layer_norm", {"M": 1024, "N": 4096}, BH_GRID, usable, total)
    # 56-tile CBs: chunks of the largest divisor of 128 tiles at most 28 = 16 tiles
    assert looped.realization == "looped"
    assert looped.block_sizes == {"tile_m": 32, "tile_x_d1": 512}
    assert looped.pipeline["loop:tile_x_d1"] == {"b_load": 1, "b_store": 1}
    assert _cores(looped.view) == 39  # 32 cores, row-major over 13 columns: 3 rows
    # TTNN's one reader kernel reads every pass's row; the writer only writes
    assert looped.load_engines == {"x": "reader"}


@pytest.mark.parametrize(
    ("kernel", "shape", "grid", "cores", "most", "busiest"),
    [
        ("residual_add", {"M": 1024, "N": 4096}, WH_GRID, 64, 64, 64),  # 4096 tiles / 64
        ("swiglu", {"M": 1024, "N": 8192}, BH_GRID, 130, 64, 64),  # 8192 / 130: 64 or 63
        # 16384 tiles / 130: TTNN's busiest core 127, Loom's best view 128 (noted)
        ("gelu", {"M": 4096, "N": 4096}, BH_GRID, 130, 127, 128),
    ],
)
def test_eltwise_policy(kernel, shape, grid, cores, most, busiest) -> None:  # type: ignore[no-untyped-def]
    policy = eltwise_policy(kernel, shape, grid)
    assert policy.block_sizes == {"tile_m": 32, "tile_n": 32}
    assert policy.pipeline == {"grid": {"b_load": 1, "b_store": 1}}
    assert f"{cores} cores, {most}/" in policy.notes[0]
    assert eltwise_view(shape, grid)[1] == busiest
    assert ("busiest core" in policy.notes[0]) == (busiest > most)


@pytest.mark.parametrize(
    ("kernel", "arch", "shape"),
    [
        ("rms_norm", WH, {"M": 256, "N": 1024}),
        ("layer_norm", BH, {"M": 128, "N": 4096}),  # the looped realization
        ("residual_add", WH, {"M": 128, "N": 256}),
    ],
)
def test_layer_baselines_lower_and_simulate(kernel, arch, shape) -> None:  # type: ignore[no-untyped-def]
    from loom.eval.cases import case
    from loom.eval.run import baseline_program

    program = baseline_program(case(kernel, arch, shape), f"ttnn-{kernel.replace('_', '-')}"
                               if kernel != "residual_add" else "ttnn-add")  # fmt: skip
    from loom.sim import simulate

    assert simulate(program, load_arch(arch)).cycles > 0


@pytest.mark.parametrize(
    ("mt", "grid", "config"),
    [
        (32, WH_GRID, (8, 4, 1)),  # 1024 tokens: 32 one-row shards on an 8 x 4 sub-grid
        (256, BH_GRID, (8, 8, 4)),  # 8192 tokens: 130 does not divide 256; 64 does
        (96, BH_GRID, (12, 8, 1)),  # 96 shards fit 13 x 10: 12 x 8
        (96, WH_GRID, (8, 6, 2)),  # on 8 x 8 the most cores dividing 96 are 48
    ],
)
def test_softmax_sharded_config_has_one_shard_per_core(mt, grid, config) -> None:  # type: ignore[no-untyped-def]
    from loom.baselines.ttnn_layer import sharded_grid, softmax_sharded_policy

    gx, gy, block_h = sharded_grid(mt, grid)
    assert (gx, gy, block_h) == config
    assert gx * gy * block_h == mt  # M * K / (block_w * block_h * 1024) == grid cores
    policy = softmax_sharded_policy({"M": 32 * mt, "N": 2048}, grid)
    assert policy.block_sizes == {"tile_m": 32 * block_h}
    assert _cores(policy.view) == gx * gy


def test_a_resident_row_also_offers_its_single_buffered_output() -> None:
    from loom.baselines.ttnn_layer import layer_candidates

    usable, total = _l1(WH)
    resident = layer_candidates("rms_norm", {"M": 1024, "N": 4096}, WH_GRID, usable, total)
    assert [p.pipeline["grid"]["b_store"] for p in resident] == [1, 0]
    looped = layer_candidates("layer_norm", {"M": 1024, "N": 4096}, WH_GRID, usable, total)
    assert [p.realization for p in looped] == ["looped"]
    assert len(layer_candidates("gelu", {"M": 1024, "N": 4096}, WH_GRID, usable, total)) == 1
