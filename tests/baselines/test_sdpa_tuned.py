"""TTNN's SDPA with a program config: the model code's chunks (model_config.py @ 17a8a99)
and the legal chunk pairs of `ttnn-sdpa-tuned` under TTNN's CB rule
(sdpa_program_factory.cpp @ 000e7c05, program.cpp @ 5cd3a453). Every expected value
below is worked by hand from the rule as the module docstring states it."""

from __future__ import annotations

import pytest

from loom.baselines.sdpa_tuned import (
    CHUNKS,
    legal_configs,
    model_chunks,
    qk_subblock,
    sdpa_config,
    sdpa_models_policy,
    sdpa_tuned_candidates,
)
from loom.baselines.ttnn_sdpa import sdpa_policy

L1 = 1_398_784  # l1_usable_bytes of both evaluation architectures


@pytest.mark.parametrize(
    ("s", "chunks"), [(128, (64, 64)), (1920, (64, 64)), (2048, (256, 256)), (16384, (256, 256))]
)
def test_models_pass_256_chunks_from_2048_tokens_and_64_below(s, chunks) -> None:  # type: ignore[no-untyped-def]
    assert model_chunks(s) == chunks
    policy = sdpa_models_policy({"B": 1, "H": 8, "S": s, "D": 64}, (8, 8), True, None)
    assert policy.name == "ttnn-sdpa-models"
    assert (policy.block_sizes["tile_m"], policy.block_sizes["tile_n"]) == chunks
    assert any("model_config.py @ 17a8a99" in n for n in policy.notes)


@pytest.mark.parametrize(
    ("sq", "sk", "sub"),
    [(16, 16, (2, 4)), (1, 16, (1, 8)), (8, 1, (8, 1)), (1, 1, (1, 1)), (2, 2, (2, 2))],
)
def test_qk_subblock_is_ttnns_first_fit(sq, sk, sub) -> None:  # type: ignore[no-untyped-def]
    assert qk_subblock(sq, sk) == sub


def test_wormhole_d64_512_chunks_fit_non_causal_but_not_causal() -> None:
    """B=1, H=8, S=2048, D=64 on 64 cores: 4 query chunks of 512, q-parallel 4, one per core
    (Q single-buffered). Tiles (Sq = Sk = 16, Dt = 2): Q 32, K 64, V 64, out 32 (bf16),
    QK 256, out_im 32, out_acc 32, statistics 80, scalars 2 (Float16_b); non-causal adds
    the streaming scratch tile (subblock (2, 4): h <= 2, 16 % 4 == 0, 16 / 2 > 1): 595
    tiles x 2048 B = 1,218,560 B <= 1,398,784. Causal drops the scratch tile and adds a
    double-buffered 16x16 Bfp4_b mask, 512 x 576 B: 1,216,512 + 294,912 = 1,511,424 B,
    which TTNN's program refuses."""
    shape = {"B": 1, "H": 8, "S": 2048, "D": 64}
    plain = sdpa_config(shape, 64, False, (512, 512))
    assert (plain.cb_bytes, plain.streaming) == (1_218_560, True)
    causal = sdpa_config(shape, 64, True, (512, 512))
    assert (causal.cb_bytes, causal.streaming) == (1_511_424, False)
    pairs = {(c.q_chunk, c.k_chunk) for c in legal_configs(shape, 64, False, L1)}
    assert pairs == {(q, k) for q in CHUNKS for k in CHUNKS}
    causal_pairs = {(c.q_chunk, c.k_chunk) for c in legal_configs(shape, 64, True, L1)}
    assert causal_pairs == pairs - {(512, 512)}


def test_blackhole_d128_drops_512_by_512_and_keeps_512_by_256() -> None:
    """B=1, H=8, S=2048, D=128 on 130 cores (Dt = 4): 512 x 512 needs Q 64, K 128, V 128,
    out 64, QK 256, out_im 64, out_acc 64, statistics 80, scalars 2, scratch 1 = 851 tiles
    = 1,742,848 B > 1,398,784; 512 x 256 (Sk = 8) needs 64 + 64 + 64 + 64 + 128 + 64 + 64
    + 80 + 2 + 1 = 595 tiles = 1,218,560 B."""
    shape = {"B": 1, "H": 8, "S": 2048, "D": 128}
    assert sdpa_config(shape, 130, False, (512, 512)).cb_bytes == 1_742_848
    assert sdpa_config(shape, 130, False, (512, 256)).cb_bytes == 1_218_560
    pairs = {(c.q_chunk, c.k_chunk) for c in legal_configs(shape, 130, False, L1)}
    assert (512, 512) not in pairs and (512, 256) in pairs and len(pairs) == 24


def test_q_double_buffers_when_a_core_has_two_query_chunks() -> None:
    """B=1, H=8, S=1024, D=64 on 8 cores: heads 8, q-parallel 1, so a core takes all 32
    query chunks of 32 and Q is double-buffered (Sq Dt 2 = 4 tiles instead of 2): 32 x 32
    chunks (Sq = Sk = 1, no streaming: 1 / 1 is not > 1) need Q 4, K 4, V 4, out 2,
    QK 1, out_im 2, out_acc 2, statistics 5, scalars 2 = 26 tiles = 53,248 B."""
    assert sdpa_config({"B": 1, "H": 8, "S": 1024, "D": 64}, 8, False, (32, 32)).cb_bytes == 53_248


def test_chunks_that_do_not_divide_the_sequence_are_left_out() -> None:
    """S = 1920 (the Blackhole 1/8-token shape): 256 and 512 do not divide it."""
    shape = {"B": 1, "H": 8, "S": 1920, "D": 64}
    sizes = {c.q_chunk for c in legal_configs(shape, 130, False, L1)}
    assert sizes == {32, 64, 128}


def test_tuned_candidates_are_ttnns_rule_with_each_legal_chunk_pair() -> None:
    shape = {"B": 1, "H": 8, "S": 2048, "D": 64}
    candidates = sdpa_tuned_candidates(shape, (8, 8), True, None, L1)
    assert len(candidates) == 24
    for policy in candidates:
        chunks = (policy.block_sizes["tile_m"], policy.block_sizes["tile_n"])
        plain = sdpa_policy(shape, (8, 8), True, None, chunks)
        assert (policy.view, policy.multicast, policy.pipeline) == (
            plain.view,
            plain.multicast,
            plain.pipeline,
        )
        assert policy.name == "ttnn-sdpa-tuned"
        assert any("program.cpp @ 5cd3a453" in n for n in policy.notes)


def test_the_default_chunks_keep_the_ttnn_sdpa_policy() -> None:
    shape = {"B": 2, "H": 8, "S": 1024, "D": 64}
    assert sdpa_policy(shape, (8, 8), False) == sdpa_policy(shape, (8, 8), False, None, (32, 32))
