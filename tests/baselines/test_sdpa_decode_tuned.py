"""TTNN's SDPA decode with a program config: the model code's (model_config.py @ 17a8a99:
8 x 8 grid, TTNN's chunk for the length, bfloat8_b KV cache) and the legal knobs of
`ttnn-sdpa-decode-tuned` under TTNN's CB rule (sdpa_decode_program_factory.cpp @ 043b5ac,
sdpa_decode.cpp @ 050f24fa). Every expected value below is worked by hand from the rule as
the module docstring states it."""

from __future__ import annotations

import pytest

from loom.baselines.build import mapping_of
from loom.baselines.sdpa_decode_tuned import (
    decode_cb_bytes,
    decode_chunks,
    per_head_choices,
    sdpa_decode_models_policy,
    sdpa_decode_tuned_candidates,
)
from loom.baselines.ttnn_sdpa import decode_split

L1 = 1_398_784  # l1_usable_bytes of both evaluation architectures


def _knobs(policies) -> set[tuple[int, int]]:  # type: ignore[no-untyped-def]
    return {(p.block_sizes["tile_n"], p.block_sizes["tile_s"]) for p in policies}


@pytest.mark.parametrize(
    ("shape", "cores", "chunk"),
    [
        # Wormhole, B=8: 64 / 8 = 8 cores per batch for 32 KV heads: 4 heads per core
        ({"B": 8, "H": 32, "S": 1024, "D": 64}, 64, 512),
        # Blackhole, B=10: still the 8 x 8 grid; 64 // 10 = 6 cores per batch, ceil(32 / 6)
        # = 6 heads per core, 10 x ceil(32 / 6) = 60 busy cores (of 130 on the card); a
        # Loom view has whole rows: 8 x 8, 5 heads per core (favours the baseline)
        ({"B": 10, "H": 32, "S": 4096, "D": 128}, 64, 512),
        # B=1, H=8, S=8192: 16 x 8 KV heads caps nothing on 64 cores: 8 cores per head,
        # 16 chunks of 512 over 8 cores, 1024 positions each
        ({"B": 1, "H": 8, "S": 8192, "D": 64}, 64, 512),
    ],
)
def test_models_run_8x8_with_ttnns_chunk_and_a_bfp8_cache(shape, cores, chunk) -> None:  # type: ignore[no-untyped-def]
    policy = sdpa_decode_models_policy(shape)
    assert policy.name == "ttnn-sdpa-decode-models"
    assert policy.formats == "k=bfp8,v=bfp8"
    assert policy.block_sizes["tile_n"] == chunk
    assert mapping_of(policy.view).num_cores == cores
    assert any("model_config.py @ 17a8a99" in n for n in policy.notes)


def test_cb_bytes_of_a_512_chunk_at_d64_and_the_bfp8_cache_at_d128() -> None:
    """D=64 (Dt = 2), k_chunk 512 (Sk = 16), one core per head, bf16 cache; half tiles
    (16 x 32 Float16_b, 1024 B) for Q, mask, im and stats: Q + tilized Q 4 x 1024, K + V
    2 x 2 x 16 x 2 x 2048 = 262,144, mask + QK^T 2 x 16 x 1024, out_im/out_acc/out_acc_2
    3 x 2 x 1024, 11 statistics + out_o (2) + 2 scalars = 15 x 1024 plus the full col
    identity tile 2048, output 2 x 2048: 326,656 B. At D=128 (Dt = 4) with a bfp8 cache
    (1088 B a tile): 8192 + 2 x 2 x 16 x 4 x 1088 (278,528) + 32,768 + 12,288 + 17 x 1024
    + 2048 + 8192 = 359,424 B. Two cores per head add the reduction CB, (Dt + 2) half
    tiles per extra core: + 4096 at D=64."""
    assert decode_cb_bytes({"D": 64}, 512, 1) == 326_656
    assert decode_cb_bytes({"D": 128}, 512, 1, "bfp8") == 359_424
    assert decode_cb_bytes({"D": 64}, 512, 2) == 326_656 + 4096


def test_tuned_at_evaluation_sizes_varies_only_the_chunk() -> None:
    """B=8, H=32 on 64 cores: the 256 KV heads outnumber the cores, one core per head
    whatever max_cores_per_head_batch says; k_chunk 32 ... 1024 (powers of two up to
    S = 1024) all fit L1 (1024 at D=64: K + V 2 x 2 x 32 x 2 x 2048 = 524,288 B)."""
    assert per_head_choices(8, 32, 64) == (1,)
    assert decode_chunks(1024) == (32, 64, 128, 256, 512, 1024)
    candidates = sdpa_decode_tuned_candidates({"B": 8, "H": 32, "S": 1024, "D": 64}, (8, 8), L1)
    assert _knobs(candidates) == {(k, 1024) for k in decode_chunks(1024)}
    assert all(p.name == "ttnn-sdpa-decode-tuned" and not p.formats for p in candidates)


def test_tuned_splits_a_head_and_drops_chunks_past_l1() -> None:
    """B=1, H=8, S=8192, D=128 on 64 cores: caps 1 ... 8 give 1 ... 8 cores per head
    (min(64, cap x 8) / 8). k_chunk 2048 needs K + V 2 x 2 x 64 x 4 x 2048 = 2 MiB > L1:
    left out; 1024 fits (1,162,240 B). A split whose chunks do not divide evenly (3 cores:
    ceil(8 / 3) = 3 chunks of 1024 each, 3072 does not divide 8192) is left out, and a
    cap that leaves cores idle (6 and 7 cores for 8 chunks of 1024 give 4 and 4 x 2048)
    is the 4-core program, offered once."""
    assert [decode_split(1, 8, 64, cap)[1] for cap in per_head_choices(1, 8, 64)] == list(
        range(1, 9)
    )
    assert decode_cb_bytes({"D": 128}, 1024, 1) == 1_162_240
    knobs = _knobs(sdpa_decode_tuned_candidates({"B": 1, "H": 8, "S": 8192, "D": 128}, (8, 8), L1))
    assert all(k <= 1024 for k, _ in knobs) and (1024, 1024) in knobs
    assert (1024, 3072) not in knobs and (1024, 8192) in knobs and (32, 1024) in knobs
    assert len(knobs) == len(sdpa_decode_tuned_candidates(
        {"B": 1, "H": 8, "S": 8192, "D": 128}, (8, 8), L1))  # fmt: skip
