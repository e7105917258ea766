"""TTNN's SDPA with a program config: the chunk sizes a model passes, and every chunk pair
a performance engineer tuning TTNN could ship (which one is fastest is the evaluation's to
find: it simulates, this package does not).

Both run TTNN's own rule (`loom.baselines.ttnn_sdpa`: grid split over batch, heads, query
chunks; K/V chains) with the chunks of an ``SDPAProgramConfig`` instead of 32 x 32.

`ttnn-sdpa-models`. Source: tenstorrent/tt-metal ``models/tt_transformers/tt/
model_config.py`` @ 17a8a99d62bb4a596727b72bfd98f574f2d5f002 (``SDPA_PROGCFG``, the
prefill attention config of the shared Llama/Qwen/Mistral model code, causal prefill):
``q_chunk_size = k_chunk_size = 256`` when the sequence is at least 2048 long, else 64
(with no ``chunk_start_idx``). The model passes ``compute_with_storage_grid_size=(8, 8)``
on every device; here the whole grid is used (on Blackhole 13 x 10 the model itself would
run on 64 of 130 cores: the baseline is, if anything, favoured).

`ttnn-sdpa-tuned` candidates: ``q_chunk_size`` x ``k_chunk_size`` in {32, 64, 128, 256,
512} (TTNN requires multiples of the 32-row tile, ``sdpa_device_operation.cpp``), those
whose circular buffers fit L1 under TTNN's own rule, and that divide the sequence (TTNN
pads a chunk that does not and masks the padding: extra work, never the fastest, and
Loom's lowering takes dividing blocks only). TTNN's L1 rule: the program factory
(``sdpa_program_factory.cpp`` @ 000e7c053de83f4dd8bb52da5aa09bda2ead7ce4) allocates,
per core, in tiles of ``Sq = q_chunk/32``, ``Sk = k_chunk/32``, ``Dt = D/32``:

    Q          Sq*Dt, doubled when a core has more than one query chunk   (input format)
    K, V       2*Sk*Dt each                                               (input format)
    mask       2*Sq*Sk in Bfp4_b when causal (or padded, off the streaming path)
    QK^T       Sq*Sk; out_im, out_acc Sq*Dt each; 5 statistics Sq each;
               2 scalar tiles; 1 recip scratch tile on the streaming path  (Float16_b)
    out        Sq*Dt                                                      (output format)

and ``Program::validate_circular_buffer_region`` (``tt_metal/impl/program/program.cpp``
@ 5cd3a453f15f34d99747f21b395fe84e6551ab71) refuses a program whose statically
allocated CBs end past the core's L1 (they start at the unreserved base); the
architecture's ``l1_usable_bytes`` stands for that room. The streaming path (one scratch
tile) is taken when non-causal, unpadded, without fp32 dest accumulation (TTNN's SDPA
default) and the QK subblock (``sdpa_subblock_utils.hpp`` @
37d02a42928e4713c7d932ca9a85ebf7cd1607f1: the first of (2,4) (4,2) (1,8) (8,1) ... with
h*w <= 8 dividing (Sq, Sk)) has h <= 2, Sk a multiple of 8/h, and Sq/h > 1.

Loom's lowering sizes the same kernel's buffers from its own program (fp32 scores and
accumulators where TTNN's intermediates are Float16_b), so the largest TTNN-legal pairs
may not build here: 256 x 512 and up at D=64 on Wormhole, and the model code's 256 x 256
for causal D=128 on Blackhole. The evaluation leaves such a candidate out of the tuned
search and names it in the row's notes (`loom.eval.tuned`); `ttnn-sdpa-models` then
records the lowering's refusal as its row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from loom.baselines.build import Policy
from loom.baselines.ttnn_sdpa import sdpa_policy, sdpa_split

CHUNKS = (32, 64, 128, 256, 512)
TILE = 32
TILE_BYTES = {"bf16": 2048, "bfp8_b": 1088, "bfp4_b": 576, "fp32": 4096}
"""Bytes of one 32 x 32 tile per TT-Metal data format (block floats: 16-element
mantissa groups of 8 or 4 bits plus one shared exponent byte per 16 values)."""
DST_TILES = 8
"""Dest tiles in half-sync bf16 mode (TTNN's SDPA default: no fp32 dest accumulation)."""
SUBBLOCKS = tuple(
    sorted(
        ((h, w) for h in range(1, 9) for w in range(1, 9) if h * w <= 8),
        key=lambda hw: (-hw[0] * hw[1], max(hw), hw[0]),
    )
)
"""TTNN's subblock candidates in its order: largest h*w first, then the squarer, then the
lower h ((2, 4), (4, 2), (1, 8), (8, 1), (1, 7), ...)."""
MODELS_SOURCE = (
    "tenstorrent/tt-metal models/tt_transformers/tt/model_config.py @ "
    "17a8a99d62bb4a596727b72bfd98f574f2d5f002 (SDPA_PROGCFG)"
)
L1_SOURCE = (
    "tenstorrent/tt-metal sdpa_program_factory.cpp @ 000e7c053de83f4dd8bb52da5aa09bda2ead7ce4 "
    "(CB sizes), tt_metal/impl/program/program.cpp @ 5cd3a453f15f34d99747f21b395fe84e6551ab71 "
    "(CB region within L1), sdpa_subblock_utils.hpp @ 37d02a42928e4713c7d932ca9a85ebf7cd1607f1"
)


def qk_subblock(sq: int, sk: int, dst: int = DST_TILES) -> tuple[int, int]:
    """TTNN's QK^T output subblock (h, w) for a (sq, sk)-tile chunk pair."""
    for h, w in SUBBLOCKS:
        if h * w <= dst and sq % h == 0 and sk % w == 0:
            return h, w
    return 1, 1


@dataclass(frozen=True)
class SdpaConfig:
    """One SDPAProgramConfig's chunks on one shape, with TTNN's CB footprint."""

    q_chunk: int
    k_chunk: int
    cb_bytes: int
    streaming: bool


def sdpa_config(
    shape: dict[str, int],
    cores: int,
    causal: bool,
    chunks: tuple[int, int],
    dtype: str = "bf16",
) -> SdpaConfig:
    """TTNN's per-core CB bytes for `chunks` (q, k) on `shape` over `cores` cores (inputs
    and output in `dtype`, intermediates Float16_b)."""
    q_chunk, k_chunk = chunks
    s, dt = shape["S"], shape["D"] // TILE
    sq, sk = q_chunk // TILE, k_chunk // TILE
    q_chunks = math.ceil(s / q_chunk)
    per_core = math.ceil(q_chunks / sdpa_split(shape["B"], shape["H"], s, cores, q_chunk)[2])
    padded = s % q_chunk != 0 or s % k_chunk != 0
    h, _ = qk_subblock(sq, sk)
    streaming = not causal and not padded and h <= 2 and sk % (DST_TILES // h) == 0 and sq > h
    io = TILE_BYTES[dtype]
    im = TILE_BYTES["bf16"]
    io_tiles = sq * dt * (2 if per_core > 1 else 1) + 4 * sk * dt + sq * dt
    im_tiles = sq * sk + 2 * sq * dt + 5 * sq + 2 + (1 if streaming else 0)
    mask = 0
    if causal or (padded and not streaming):
        mask = 2 * sq * sk * TILE_BYTES["bfp4_b"]
    elif padded:
        mask = im  # the streaming path's one -inf tile
    return SdpaConfig(q_chunk, k_chunk, io_tiles * io + im_tiles * im + mask, streaming)


def legal_configs(
    shape: dict[str, int], cores: int, causal: bool, l1_bytes: int, dtype: str = "bf16"
) -> tuple[SdpaConfig, ...]:
    """Every (q_chunk, k_chunk) in `CHUNKS` that divides the sequence and whose CBs fit
    `l1_bytes`, q_chunk major."""
    out = []
    for q in CHUNKS:
        for k in CHUNKS:
            if shape["S"] % q or shape["S"] % k:
                continue
            cfg = sdpa_config(shape, cores, causal, (q, k), dtype)
            if cfg.cb_bytes <= l1_bytes:
                out.append(cfg)
    return tuple(out)


def model_chunks(s: int) -> tuple[int, int]:
    """The (q_chunk_size, k_chunk_size) tt-metal's model code passes for a prefill of `s`
    tokens (`MODELS_SOURCE`)."""
    return (256, 256) if s >= 2048 else (64, 64)


def sdpa_models_policy(
    shape: dict[str, int], grid: tuple[int, int], causal: bool, noc_x: tuple[int, ...] | None
) -> Policy:
    """`ttnn-sdpa-models`: TTNN's SDPA with the model code's chunks for this length."""
    chunks = model_chunks(shape["S"])
    why = f"chunks as the models pass them for S={shape['S']}: {MODELS_SOURCE}"
    return sdpa_policy(shape, grid, causal, noc_x, chunks, "ttnn-sdpa-models", why)


def sdpa_tuned_candidates(
    shape: dict[str, int],
    grid: tuple[int, int],
    causal: bool,
    noc_x: tuple[int, ...] | None,
    l1_bytes: int,
) -> tuple[Policy, ...]:
    """`ttnn-sdpa-tuned`'s candidates: TTNN's SDPA with each legal chunk pair (the
    evaluation simulates them and keeps the fastest)."""
    legal = legal_configs(shape, grid[0] * grid[1], causal, l1_bytes)
    out = []
    for cfg in legal:
        why = (
            f"tuned over TTNN's legal chunks ({len(legal)} of {len(CHUNKS) ** 2} fit L1 and "
            f"divide S): this one {cfg.cb_bytes} B of CBs <= {l1_bytes} B; rule: {L1_SOURCE}"
        )
        chunks = (cfg.q_chunk, cfg.k_chunk)
        out.append(sdpa_policy(shape, grid, causal, noc_x, chunks, "ttnn-sdpa-tuned", why))
    return tuple(out)
