"""Tuned matmul configs, SDPA and SDPA-decode defaults, TileLoom ranking: each policy
reproduces its source's choice, and its Schedule lowers and simulates."""

from __future__ import annotations

from dataclasses import replace

import pytest

from loom.arch import load_arch
from loom.baselines.build import Policy, build_schedule
from loom.baselines.tileloom import POW2, tileloom_candidates
from loom.baselines.ttnn_matmul import oob_policy, tuned_policy, tuned_row
from loom.baselines.ttnn_sdpa import (
    decode_k_chunk,
    decode_split,
    sdpa_decode_policy,
    sdpa_policy,
    sdpa_split,
)

WH, BH = "wormhole_n150", "blackhole_p150_13x10"


def _streams(buffered, policy: Policy, arch: str, shape: dict[str, int]) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The reader and writer streams of `policy` lowered on `buffered` (the fixture's
    program, traced at `shape`)."""
    from loom.lower import format_program, lower

    schedule = build_schedule(buffered, arch, shape, "HiFi4", policy)
    text = format_program(lower(buffered.program, buffered, schedule, load_arch(arch)))
    return text.split("writer:")[0].split("reader:")[1], text.split("writer:")[1]


@pytest.mark.parametrize(
    ("arch", "shape", "config"),
    [
        # (in0_block_w, per_core_M, per_core_N, out_block_h, out_block_w) of the manual rows
        (WH, {"M": 512, "K": 512, "N": 512}, (2, 2, 2, 2, 2)),
        (WH, {"M": 4096, "K": 4096, "N": 4096}, (16, 16, 16, 8, 8)),
        (BH, {"M": 4160, "K": 4160, "N": 4160}, (10, 13, 10, 13, 10)),
    ],
)
def test_tuned_policy_is_the_published_manual_config(arch, shape, config) -> None:  # type: ignore[no-untyped-def]
    row = tuned_row(shape, arch)
    assert row is not None
    cfg = row.config
    got = (cfg.in0_block_w, cfg.per_core_m, cfg.per_core_n, *row.out_block)
    assert got == config
    policy = tuned_policy(shape, arch)
    assert policy is not None
    assert policy.block_sizes == {
        "tile_m": 32 * config[3],
        "tile_n": 32 * config[4],
        "tile_k": 32 * config[0],
    }
    assert dict((d, n) for d, n, _ in policy.view) == {"y": cfg.grid_y, "x": cfg.grid_x}


def test_tuned_policy_is_absent_for_unpublished_shapes() -> None:
    assert tuned_policy({"M": 256, "N": 256, "K": 256}, WH) is None


@pytest.mark.parametrize(
    ("b", "h", "s", "cores", "split"),
    [
        (1, 8, 2048, 64, (1, 8, 8)),  # heads first, then 8 of the 64 query chunks
        (2, 8, 1024, 64, (2, 8, 4)),
        (1, 8, 1920, 130, (1, 8, 16)),  # 130 // 8 = 16 query groups on Blackhole
        (1, 2, 64, 64, (1, 2, 2)),  # only 2 query chunks exist
    ],
)
def test_sdpa_splits_batch_then_heads_then_query_chunks(b, h, s, cores, split) -> None:  # type: ignore[no-untyped-def]
    assert sdpa_split(b, h, s, cores) == split


def test_causal_sdpa_policy_uses_32_chunks_and_no_multicast() -> None:
    policy = sdpa_policy({"B": 1, "H": 8, "S": 2048, "D": 64}, (8, 8), causal=True)
    assert policy.block_sizes == {"tile_b": 1, "tile_m": 32, "tile_n": 32}
    assert policy.multicast == ()
    # Q, K, V by the reader kernel; the mask's index tiles by the writer, which makes
    # TTNN's causal mask (generate_mask)
    assert policy.load_engines == {
        "q": "reader",
        "k": "reader",
        "v": "reader",
        "tile_m_col_index": "writer",
        "tile_n_index": "writer",
    }
    cores = 1
    for _, n, _ in policy.view:
        cores *= n
    assert cores == 64


@pytest.mark.parametrize(
    ("users", "per_head"), [(1, 110), (2, 55), (3, 36), (4, 27), (6, 18), (7, 15), (8, 13)]
)
def test_sdpa_decode_without_a_program_config_spreads_a_head_over_the_whole_grid(  # type: ignore[no-untyped-def]
    users, per_head
) -> None:
    # sdpa_decode_program_factory.cpp @ 043b5ac: with no program config the core cap is
    # every core (the 16 of max_cores_per_head_batch is the config struct's default):
    # at 110 cores and one KV head, cores per user = 110 // U
    assert decode_split(users, 1, 110)[1] == per_head


@pytest.mark.parametrize(
    ("s", "chunk"), [(1024, 512), (2048, 512), (4096, 512), (384, 128), (192, 64), (160, 32)]
)
def test_sdpa_decode_key_chunk_is_the_largest_power_of_two_dividing_the_cache(  # type: ignore[no-untyped-def]
    s, chunk
) -> None:
    # sdpa_decode.cpp @ 050f24fa (get_chunk_size): at most 512
    assert decode_k_chunk(s) == chunk


def test_sdpa_decode_policy_without_split_spreads_heads_over_the_grid() -> None:
    per_batch, per_head, heads_per_core = decode_split(8, 32, 64)
    assert (per_batch, per_head, heads_per_core) == (8, 1, 4)
    policy = sdpa_decode_policy({"B": 8, "H": 32, "S": 1024, "D": 64}, (8, 8))
    assert policy.block_sizes == {"tile_b": 1, "tile_s": 1024, "tile_n": 512}
    # B=1, H=2: 32 cores per head, but 1024 / 512 = 2 key chunks: 2 cores split the cache
    split = sdpa_decode_policy({"B": 1, "H": 2, "S": 1024, "D": 64}, (8, 8))
    assert split.block_sizes["tile_s"] == 512


@pytest.mark.parametrize(
    ("kernel", "shape"),
    [
        ("gemm", {"M": 2048, "N": 2048, "K": 2048}),
        ("flash_attention", {"B": 1, "H": 8, "S": 1024, "D": 64}),
        ("flash_decode", {"B": 8, "H": 32, "S": 1024, "D": 64}),
    ],
)
def test_tileloom_ranks_power_of_two_tiles_by_its_roofline(kernel, shape) -> None:  # type: ignore[no-untyped-def]
    arch = load_arch(WH)
    ranked = tileloom_candidates(kernel, arch, shape, "HiFi4", top_k=5)
    assert len(ranked) == 5
    cycles = [r.modeled_cycles for r in ranked]
    assert cycles == sorted(cycles)
    for r in ranked:
        sizes = [v for k, v in r.policy.block_sizes.items() if k not in ("tile_b", "tile_s")]
        assert all(v in POW2 for v in sizes)


def test_tileloom_causal_attention_keeps_kv_per_core_and_key_tiles_within_query_tiles() -> None:
    shape = {"B": 1, "H": 8, "S": 2048, "D": 64}
    arch = load_arch(WH)
    causal = tileloom_candidates("flash_attention_causal", arch, shape, "HiFi4", top_k=5)
    dense = tileloom_candidates("flash_attention", arch, shape, "HiFi4", top_k=5)
    assert len(causal) == 5
    for r in causal:
        assert r.policy.block_sizes["tile_m"] % r.policy.block_sizes["tile_n"] == 0
        assert r.policy.multicast == ()  # cores along a row run different key counts
    assert all(r.policy.multicast == ("k", "v") for r in dense)


def test_oob_policy_writes_the_1d_layout_row_major() -> None:
    policy = oob_policy({"M": 16384, "N": 256, "K": 2048}, BH, (13, 10))
    # 512 M tiles / 4 per core = 128 cores: 13 columns x 10 rows (the last row partly)
    assert policy.view == (("x", 13, "tile_m"), ("y", 10, "tile_m"))
    assert policy.multicast == ("b",)


def test_tuned_4096_cube_keeps_bf16_partial_sums_in_its_output_block_and_fits_l1() -> None:
    """TTNN ran the manual rows with fp32_dest_acc_en=False and packer_l1_acc=True: the
    partial sums live in the output CB in bf16. Written with Loom's separate fp32
    accumulator (two more blocks) the 256 x 256 out block with K block 512 would need
    1.70 MB of the 1.40 MB of L1; with its own placement it lowers."""
    import dataclasses

    from loom.baselines.build import build_schedule
    from loom.dataflow import build_buffers
    from loom.errors import ScheduleError
    from loom.flows.helion import run_frontend
    from loom.flows.lowered import lower_schedule
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel

    shape = {"M": 4096, "K": 4096, "N": 4096}
    arch, log = load_arch(WH), StageLog()
    policy = tuned_policy(shape, WH)
    assert policy is not None and policy.accumulate == "output"
    program = run_frontend(resolve_kernel("gemm"), shape, log)
    buffered = build_buffers(program, "output")
    schedule = build_schedule(buffered, WH, shape, "HiFi2", policy)
    assert set(schedule.accumulators.values()) == {"output"}
    lower_schedule(program, buffered, schedule, arch, log)
    fp32 = build_schedule(
        buffered, WH, shape, "HiFi2", dataclasses.replace(policy, accumulate="separate")
    )
    with pytest.raises(ScheduleError, match="bytes of L1 per core"):
        lower_schedule(program, buffered, fp32, arch, log)
    with pytest.raises(ValueError, match="offers not"):
        build_schedule(build_buffers(program), WH, shape, "HiFi2", policy)


@pytest.mark.parametrize("kernel", ["flash_decode", "flash_attention"])
def test_sdpa_baselines_read_q_k_and_v_in_their_reader_kernel(buffered, kernel) -> None:  # type: ignore[no-untyped-def]
    """reader_decode_all.cpp / reader_interleaved.cpp read Q, K and V (separate CBs, one
    producer): every load on the reader, where Loom's own plan would split K and V."""
    shape = {"B": 1, "H": 2, "S": 1024 if kernel == "flash_decode" else 256, "D": 64}
    if kernel == "flash_decode":
        policy = sdpa_decode_policy(shape, (13, 10))
    else:
        policy = sdpa_policy(shape, (13, 10), causal=False)
    assert policy.load_engines == {"q": "reader", "k": "reader", "v": "reader"}
    assert "reader_decode_all.cpp" in policy.notes[-1]
    reader, writer = _streams(buffered[kernel], policy, BH, shape)
    for tensor in ("q", "k", "v"):
        assert f"read {tensor}[" in reader and f"read {tensor}[" not in writer
    if kernel == "flash_decode":  # the same schedule with the plan's engines: K and V apart
        reader, writer = _streams(buffered[kernel], replace(policy, load_engines={}), BH, shape)
        assert ("read k[" in reader) != ("read v[" in reader)
        assert ("read k[" in writer) != ("read v[" in writer)
