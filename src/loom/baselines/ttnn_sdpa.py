"""TTNN's scaled-dot-product attention defaults as Schedules of the shipped kernels.

`ttnn-sdpa` (flash attention, no program config). Source: tenstorrent/tt-metal
``ttnn/cpp/ttnn/operations/transformer/sdpa/device/sdpa_program_factory.cpp`` @
cf4b34811ddd6efe4b68871fd10e1e4c1ebddf8c: chunk sizes default to
``q_chunk_size = k_chunk_size = 32``; the whole grid is used and the work is split over
batch, then heads, then query chunks, in that order::

    batch_parallel_factor = min(B, cores)
    nh_parallel_factor    = min(cores / batch_parallel_factor, NH)
    q_parallel_factor     = min(cores / (batch_pf * nh_pf), q_num_chunks)

each core taking ``ceil(B / bpf)`` batches x ``ceil(NH / nhpf)`` heads x
``ceil(q_chunks / qpf)`` query chunks, cores numbered row-major (``core = (i % grid_x,
i / grid_x)``). Every core reads its own K/V chunks from DRAM (no multicast); K and V
are double-buffered, Q double-buffered when a core has more than one query chunk.

The same policy times the causal kernel (`flash_attention_causal`, TTNN's ``is_causal=True``).
Source for the causal schedule: the same file @ 000e7c053de83f4dd8bb52da5aa09bda2ead7ce4:
the chunk sizes and the batch/head/q-chunk split are the non-causal ones; key chunks past
a query chunk's diagonal are skipped and the diagonal chunk is masked; the K/V chain
forwarding between cores is set up for non-causal runs only (``if (!is_causal)``), so
each core reads its own K/V; and ``BALANCED_Q_PARALLEL`` (when ``is_causal``, the q
chunks divide evenly over the q-parallel cores and each core has an even number) pairs
early and late query chunks on a core so that every core does the same work. A Loom
mapping hands a core its query tiles round-robin over waves (tile ``core + wave *
cores``), which comes within about ``2 / waves`` of that balance (the paper's sizes give
each core tens of waves).

`ttnn-sdpa-decode` (flash decode, no program config). Source: tenstorrent/tt-metal
``ttnn/cpp/ttnn/operations/transformer/sdpa_decode/device/sdpa_decode_program_factory.cpp``
@ 043b5ac261d74cd5543a2d73edd684ac5446bdc1 (lines 196-209 of the version documented in
the same repository's k64j notes): ``max_cores_per_head = 16`` (``max_cores_per_head_batch``
default), ``cores_per_batch = min(cores, 16 * B * KV heads) / B``, ``cores_per_head =
max(1, cores_per_batch / KV heads)``, ``heads_per_core = max(1, ceil(KV heads /
cores_per_batch))``; each head's KV sequence is split over ``cores_per_head`` cores in
chunks of ``k_chunk_size = 32`` and the partial results reduced onto the head's first
core. The shipped kernel has one KV head per query head (no grouping).
"""

from __future__ import annotations

import math

from loom.baselines.build import Policy, spread
from loom.ir.scope import Scope

SDPA_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/"
    "sdpa_program_factory.cpp @ cf4b34811ddd6efe4b68871fd10e1e4c1ebddf8c"
)
DECODE_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa_decode/device/"
    "sdpa_decode_program_factory.cpp @ 043b5ac261d74cd5543a2d73edd684ac5446bdc1"
)
Q_CHUNK = 32
K_CHUNK = 32
MAX_CORES_PER_HEAD = 16


def sdpa_split(b: int, h: int, s: int, cores: int) -> tuple[int, int, int]:
    """(batch, head, query-chunk) parallel factors of TTNN's SDPA."""
    q_chunks = math.ceil(s / Q_CHUNK)
    bpf = min(b, cores)
    hpf = min(cores // bpf, h)
    qpf = min(cores // (bpf * hpf), q_chunks)
    return bpf, hpf, qpf


def grid_layout(rows: int, chunks: int, grid: tuple[int, int]) -> tuple[tuple[str, int, str], ...]:
    """The 2-D mapping of (B*H rows, query chunks) closest to TTNN's flat split: fewest
    chunk-units per core, then fewest cores. TTNN numbers cores row-major and gives each a
    contiguous run of (batch, head, chunk) work; a Loom mapping splits each grid axis over
    whole levels of x and y, so on grids whose width does not divide the split (13 x 10)
    the busiest core may get a little more than under TTNN (the notes say how much)."""
    gx, gy = grid
    best: tuple[tuple[int, int], tuple[int, int, int, int]] | None = None
    for xm in range(1, gx + 1):
        for xb in range(1, gx // xm + 1):
            for ym in range(1, gy + 1):
                for yb in range(1, gy // ym + 1):
                    units = math.ceil(rows / (xb * yb)) * math.ceil(chunks / (xm * ym))
                    key = (units, xm * xb * ym * yb)
                    if best is None or key < best[0]:
                        best = (key, (xm, xb, ym, yb))
    assert best is not None
    xm, xb, ym, yb = best[1]
    return (("x", xm, "tile_m"), ("x", xb, "tile_b"), ("y", ym, "tile_m"), ("y", yb, "tile_b"))


def sdpa_policy(shape: dict[str, int], grid: tuple[int, int]) -> Policy:
    """`ttnn-sdpa` for the flash_attention kernels, causal or not (grid axes: B*H rows,
    query tiles)."""
    gx, gy = grid
    b, h = shape["B"], shape["H"]
    bpf, hpf, qpf = sdpa_split(b, h, shape["S"], gx * gy)
    q_chunks = math.ceil(shape["S"] / Q_CHUNK)
    q_per_core = math.ceil(q_chunks / qpf)
    ttnn_units = math.ceil(b / bpf) * math.ceil(h / hpf) * q_per_core
    view = grid_layout(b * h, q_chunks, grid)
    cores = {lv_axis: 1 for lv_axis in ("tile_m", "tile_b")}
    for _, size, axis in view:
        cores[axis] *= size
    units = math.ceil(b * h / cores["tile_b"]) * math.ceil(q_chunks / cores["tile_m"])
    pipeline = {Scope("tile_n").key: {"b_load": 1}}
    if q_per_core > 1:
        pipeline[Scope.grid().key] = {"b_load": 1}
    notes = (
        f"ttnn-sdpa: q_chunk {Q_CHUNK} k_chunk {K_CHUNK}; parallel batch {bpf} x heads {hpf} "
        f"x q-chunks {qpf}; {ttnn_units} q-chunk(s) per core under TTNN, {units} in this "
        "mapping; K/V unicast",
        f"rule: {SDPA_SOURCE}",
    )
    blocks = {"tile_b": 1, "tile_m": Q_CHUNK, "tile_n": K_CHUNK}
    return Policy("ttnn-sdpa", view, blocks, (), pipeline, notes)


def decode_split(b: int, kv_heads: int, cores: int) -> tuple[int, int, int]:
    """(cores per batch, cores per head, heads per core) of TTNN's SDPA decode."""
    per_batch = min(cores, MAX_CORES_PER_HEAD * b * kv_heads) // b
    per_head = max(1, per_batch // kv_heads)
    heads_per_core = max(1, math.ceil(kv_heads / per_batch))
    return per_batch, per_head, heads_per_core


def sdpa_decode_policy(shape: dict[str, int], grid: tuple[int, int]) -> Policy:
    """`ttnn-sdpa-decode` for the flash_decode kernel (grid axes: B*H rows, KV splits)."""
    gx, gy = grid
    b, h, s = shape["B"], shape["H"], shape["S"]
    per_batch, per_head, heads_per_core = decode_split(b, h, gx * gy)
    split = min(per_head, math.ceil(s / K_CHUNK))
    tile_s = math.ceil(s / split / K_CHUNK) * K_CHUNK
    head_cores = b * math.ceil(h / heads_per_core) if split == 1 else b * h
    if split == 1:
        view = spread(min(head_cores, gx * gy), gx, "tile_b")
    else:
        view = (
            ("x", min(split, gx), "tile_s"),
            ("y", math.ceil(split / gx), "tile_s"),
            ("x", max(1, gx // split), "tile_b"),
            ("y", max(1, min(b * h, gy // math.ceil(split / gx))), "tile_b"),
        )
    notes = (
        f"ttnn-sdpa-decode: k_chunk {K_CHUNK}; cores per batch {per_batch}, per head "
        f"{per_head}, heads per core {heads_per_core}; KV split over {split} core(s)",
        f"rule: {DECODE_SOURCE}",
    )
    blocks = {"tile_b": 1, "tile_s": tile_s, "tile_n": K_CHUNK}
    pipeline = {Scope("tile_n").key: {"b_load": 1}}
    return Policy("ttnn-sdpa-decode", view, blocks, (), pipeline, notes)
