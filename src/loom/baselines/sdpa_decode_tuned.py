"""TTNN's SDPA decode with a program config: the knobs tt-metal's model code passes, and
every legal choice a performance engineer tuning TTNN could ship (which is fastest is
the evaluation's to find: it simulates, this package does not).

Both run TTNN's own decode rule (`loom.baselines.ttnn_sdpa.sdpa_decode_policy`: cores per
batch, per head, heads per core; a head's cache split over its cores) with the knobs of
an ``SDPAProgramConfig``: ``k_chunk_size``, ``max_cores_per_head_batch`` and the grid.

`ttnn-sdpa-decode-models`. Source: tenstorrent/tt-metal ``models/tt_transformers/tt/
model_config.py`` @ 17a8a99d62bb4a596727b72bfd98f574f2d5f002: ``SDPA_DECODE_PROGCFG`` is
``compute_with_storage_grid_size=(8, 8)``, ``k_chunk_size=0`` (so ``sdpa_decode.cpp``'s
``get_chunk_size``: the largest power of two dividing the cache, at most 512) and the
default ``max_cores_per_head_batch`` of 16 (``sdpa_config.hpp``); the KV cache is
bfloat8_b (``ModelOptimizations._default_settings``: ``TensorGroup.KV_CACHE:
PrecisionSetting.BFP8``, which both the performance and the accuracy settings of the
Llama 3 / Mistral models keep). So the baseline runs on an 8 x 8 grid also on Blackhole
(64 of 130 cores, as the model code would) and reads K and V as bfp8 tiles (1088 B
where Loom's bf16 reads 2048: the baseline is favoured there). Where TTNN leaves the
last cores of the grid idle (B=10 on 8 x 8: 6 cores per batch, 60 busy, 6 heads on most),
Loom's view, whole rows of the grid, spreads the heads over all 64 (5 per core): that
favours the baseline too.

Cost in the evaluation: the tuned search simulates every candidate (6 at the evaluation's
shapes, one per chunk from 32 to 1024), about 30 s of CPU for B=8, H=32, S=1024, D=64 on
Wormhole; the default's program, which is one of them, is simulated once per case.

`ttnn-sdpa-decode-tuned` candidates, on the whole grid and with the kernel's own formats:
``k_chunk_size`` a power of two and a multiple of 32 (``sdpa_decode.cpp`` @
050f24fa811f4f26798a78feaac8a319912f5f10 refuses anything else) from 32 up to the
cache length, times every cores-per-head count ``max_cores_per_head_batch`` can give
(``sdpa_decode_program_factory.cpp`` @ 043b5ac261d74cd5543a2d73edd684ac5446bdc1:
``min(cores, max * B * KV heads) / B / KV heads``), those whose circular buffers fit L1
under TTNN's rule and whose key chunks divide evenly over a head's cores (Loom's lowering
takes dividing blocks only). Where the KV heads of a batch outnumber its cores (every
evaluation shape: B x 32 heads >= 64 cores), a head has one core whatever the config,
and only the chunk varies. TTNN's L1 rule: the program factory allocates per core, with
``PNHt = 1`` (one query head per KV head, padded to a tile), ``Sk = k_chunk/32``,
``Dt = D/32``:

    Q, tilized Q       Dt each                                   (Q's tile)
    K, V               2*Sk*Dt each                              (the cache's format)
    mask, QK^T         Sk each                                   (mask tile, im tile)
    out_im, out_acc, out_acc_2   Dt each                         (im tile)
    statistics         11; out_o Dt; 2 scalars                   (stats/scalar tile)
    col identity       1                                         (full Float16_b tile)
    reduction          (Dt + 2) * (cores per head - 1)           (stats tile)
    out                Dt                                        (output format)

Intermediates are Float16_b; with ``is_causal`` (the decode default, attending up to the
current position), a bf16 Q and at most 16 query heads per KV head, the Q, mask, scalar,
im and stats tiles are 16 x 32 half tiles. The small cur_pos page the models add is not
counted. ``Program::validate_circular_buffer_region`` (`sdpa_tuned.L1_SOURCE`) refuses a
program whose CBs end past the core's L1; the architecture's ``l1_usable_bytes`` stands
for that room.
"""

from __future__ import annotations

from loom.baselines.build import Policy
from loom.baselines.sdpa_tuned import L1_SOURCE
from loom.baselines.ttnn_sdpa import decode_kv_split, decode_split, sdpa_decode_policy
from loom.ir.formats import tile_bytes

TILE = 32
MIN_K_CHUNK = 32
MODELS_GRID = (8, 8)
MODELS_MAX_PER_HEAD = 16
"""``SDPAProgramConfig.max_cores_per_head_batch``'s default (the models leave it)."""
MODELS_FORMATS = "k=bfp8,v=bfp8"
"""The models' KV cache in bfloat8_b (Q and the output stay bf16)."""
MODELS_DECODE_SOURCE = (
    "tenstorrent/tt-metal models/tt_transformers/tt/model_config.py @ "
    "17a8a99d62bb4a596727b72bfd98f574f2d5f002 (SDPA_DECODE_PROGCFG: grid 8x8, k_chunk_size 0 "
    "-> get_chunk_size; KV_CACHE bfp8)"
)
DECODE_L1_SOURCE = (
    "tenstorrent/tt-metal sdpa_decode_program_factory.cpp @ "
    "043b5ac261d74cd5543a2d73edd684ac5446bdc1 (CB sizes, cores per head); sdpa_decode.cpp @ "
    f"050f24fa811f4f26798a78feaac8a319912f5f10 (k_chunk_size a power of 2, x32); {L1_SOURCE}"
)


def decode_cb_bytes(
    shape: dict[str, int], k_chunk: int, per_head: int, kv_format: str = "bf16"
) -> int:
    """TTNN's per-core CB bytes of SDPA decode (causal, bf16 Q and output, one query head
    per KV head) with key chunks of `k_chunk`, `per_head` cores per head and the cache in
    `kv_format`."""
    sk, dt = k_chunk // TILE, shape["D"] // TILE
    half = tile_bytes("bf16", 16, 32)  # the half-tile path (causal, <= 16 q heads)
    full = tile_bytes("bf16")
    kv = tile_bytes(kv_format)
    q = 2 * dt * half
    cache = 2 * 2 * sk * dt * kv
    mask_qk = 2 * sk * half
    im = 3 * dt * half
    stats = (11 + dt + 2) * half + full
    reduce = (dt + 2) * (per_head - 1) * half
    return q + cache + mask_qk + im + stats + reduce + dt * full


def decode_chunks(s: int) -> tuple[int, ...]:
    """Every ``k_chunk_size`` TTNN accepts for a cache of `s` (powers of two from 32, at
    most `s`)."""
    out, k = [], MIN_K_CHUNK
    while k <= s:
        out.append(k)
        k *= 2
    return tuple(out)


def per_head_choices(b: int, kv_heads: int, cores: int) -> tuple[int, ...]:
    """The cores-per-head counts ``max_cores_per_head_batch`` can give on `cores` cores,
    each with the smallest cap that gives it."""
    seen: dict[int, int] = {}
    for cap in range(1, cores + 1):
        seen.setdefault(decode_split(b, kv_heads, cores, cap)[1], cap)
    return tuple(sorted(seen.values()))


def sdpa_decode_models_policy(shape: dict[str, int]) -> Policy:
    """`ttnn-sdpa-decode-models`: TTNN's SDPA decode as the model code configures it."""
    why = f"config and KV format as the models pass them: {MODELS_DECODE_SOURCE}"
    return sdpa_decode_policy(
        shape, MODELS_GRID, 0, MODELS_MAX_PER_HEAD, "ttnn-sdpa-decode-models", why,
        MODELS_FORMATS,
    )  # fmt: skip


def sdpa_decode_tuned_candidates(
    shape: dict[str, int], grid: tuple[int, int], l1_bytes: int
) -> tuple[Policy, ...]:
    """`ttnn-sdpa-decode-tuned`'s candidates: TTNN's SDPA decode with each legal
    (k_chunk_size, max_cores_per_head_batch) (the evaluation simulates them and keeps the
    fastest)."""
    b, h, s = shape["B"], shape["H"], shape["S"]
    cores = grid[0] * grid[1]
    legal: list[tuple[int, int, int]] = []
    offered = 0
    seen = set()
    for cap in per_head_choices(b, h, cores):
        per_head = decode_split(b, h, cores, cap)[1]
        for k_chunk in decode_chunks(s):
            offered += 1
            cb = decode_cb_bytes(shape, k_chunk, per_head)
            split, tile_s = decode_kv_split(s, per_head, k_chunk)
            # a larger cap that leaves cores idle runs the same program: offered once
            if cb <= l1_bytes and s % tile_s == 0 and (k_chunk, split) not in seen:
                seen.add((k_chunk, split))
                legal.append((k_chunk, cap, cb))
    out = []
    for k_chunk, cap, cb in legal:
        why = (
            f"tuned over TTNN's decode knobs ({len(legal)} of {offered} fit L1 and split S "
            f"evenly): max_cores_per_head_batch {cap}, {cb} B of CBs <= {l1_bytes} B; rule: "
            f"{DECODE_L1_SOURCE}"
        )
        out.append(sdpa_decode_policy(shape, grid, k_chunk, cap, "ttnn-sdpa-decode-tuned", why))
    return tuple(out)
