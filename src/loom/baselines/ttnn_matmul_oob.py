"""TTNN's automatic matmul program configuration (what ``a @ b`` runs without a config).

Provisional: this module states the rule for the case the published out-of-box tables
use: both inputs and the output DRAM-interleaved, no batch, no user grid. It follows
tt-metal ``ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config.cpp``
(``create_simple_matmul_program_config``, ``get_per_core_factor``,
``get_multi_dim_per_core_factor``, ``get_matmul_subblock_params`` and ``is_narrow_shape``;
commit 001cea9a149df28de134c87b5324972bf4308d48):

1. a shape is *narrow* when one of M, N is more than 8 times the other, or (all in DRAM)
   one of them fits in a tile; a narrow wide shape multicasts in0 in 1-D, a narrow tall one
   in1;
2. otherwise ``per_core_factor`` is the largest of 16, 8, 4, 2 whose square block (with
   ``in0_block_w`` 2) fits L1; the blocks it makes along M and N decide the kind: one row
   of blocks -> 1-D in0 multicast, one column -> 1-D in1 multicast, else the 2-D multicast
   on the whole grid with ``per_core_M = ceil(Mt / grid_y)``, ``per_core_N = ceil(Nt /
   grid_x)`` and ``in0_block_w = Kt / grid_x`` when that divides (else 1);
3. sub-blocks: the first of TTNN's (h, w) preference list that divides the block (at most
   4 tiles with fp32 accumulation).

The math fidelity is TTNN's default for a call without a compute kernel config, LoFi
without fp32 accumulation: the published out-of-box bfloat8_b rows reach more than half of
the LoFi peak (device-profiler utilization up to 72% on N150 and 87% on P150), which
HiFi2's two phases could not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loom.ir.formats import tile_bytes

TILE = 32
SUBBLOCK_CHOICES = (
    (4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6),
    (5, 1), (1, 5), (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1),
)  # fmt: skip
L1_BUDGET_BYTES = {"wormhole_b0": 1398784, "blackhole": 1398784}
"""L1 bytes a core's circular buffers may use (the usable L1 of the architecture files)."""


@dataclass(frozen=True)
class TtnnMatmulConfig:
    """One TTNN matmul program config, sizes in tiles."""

    kind: Literal["mcast_2d", "mcast_1d_in0", "mcast_1d_in1", "reuse"]
    grid_x: int
    grid_y: int
    in0_block_w: int
    per_core_m: int
    per_core_n: int
    out_subblock_h: int
    out_subblock_w: int
    transpose_mcast: bool
    math_fidelity: str
    fp32_dest_acc: bool


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def cb_bytes(m: int, n: int, k: int, in_bytes: int, out_bytes: int) -> int:
    """TTNN's estimate of a core's circular buffers: double-buffered in0 (m x k) and in1
    (k x n) blocks, the output block and its intermediate (partials) block."""
    return 2 * k * (m + n) * in_bytes + 2 * m * n * out_bytes


def l1_budget(arch_name: str) -> int:
    key = "blackhole" if "blackhole" in arch_name else "wormhole_b0"
    return L1_BUDGET_BYTES[key]


def subblock(m: int, n: int, fp32_dest_acc: bool) -> tuple[int, int]:
    for h, w in SUBBLOCK_CHOICES:
        if fp32_dest_acc and h * w > 4:
            continue
        if m % h == 0 and n % w == 0:
            return h, w
    return 1, 1


def out_block(
    per_core_m: int, per_core_n: int, in0_block_w: int, dtype: str, arch_name: str
) -> tuple[int, int, int]:
    """(out_block_h, out_block_w, in0_block_w) that fit L1: TTNN keeps the whole per-core
    block when it fits, else tries divisor pairs from the largest product down (the most
    square pair per product) for each in0_block_w divisor from the largest down."""
    size = tile_bytes(dtype)
    budget = l1_budget(arch_name)
    if cb_bytes(per_core_m, per_core_n, in0_block_w, size, size) < budget:
        return per_core_m, per_core_n, in0_block_w
    ms = [per_core_m, 1, *(f for f in range(per_core_m // 2, 1, -1) if per_core_m % f == 0)]
    ns = [per_core_n, 1, *(f for f in range(per_core_n // 2, 1, -1) if per_core_n % f == 0)]
    best: dict[int, tuple[int, int]] = {}
    for fm in ms:
        for fn in ns:
            ratio = max(fm, fn) / min(fm, fn)
            old = best.get(fm * fn)
            if old is None or max(old) / min(old) >= ratio:
                best[fm * fn] = (fm, fn)
    for k in range(in0_block_w, 0, -1):
        if in0_block_w % k:
            continue
        for product in sorted(best, reverse=True):
            fm, fn = best[product]
            if cb_bytes(fm, fn, k, size, size) < budget:
                return fm, fn, k
    return 1, 1, 1


def oob_matmul_config(
    m: int, k: int, n: int, grid_x: int, grid_y: int, dtype: str, arch_name: str
) -> TtnnMatmulConfig:
    """The config TTNN picks for DRAM-interleaved ``a @ b`` (a: m x k, b: k x n)."""
    mt, kt, nt = _ceil(m, TILE), _ceil(k, TILE), _ceil(n, TILE)
    fidelity, fp32 = "LoFi", False
    size = tile_bytes(dtype)
    ratio = max(m, n) // max(min(m, n), 1)
    narrow = ratio > 8 or m <= TILE or n <= TILE
    in0_block_w = 2
    factor = next(
        (
            f
            for f in (16, 8, 4, 2)
            if cb_bytes(f, f, in0_block_w, size, size) < l1_budget(arch_name)
        ),
        1,
    )
    blocks_y, blocks_x = _ceil(mt, factor), _ceil(nt, factor)
    if (blocks_y > 1 or blocks_x > 1) and kt % in0_block_w:
        in0_block_w = 1
    fits = not (blocks_y == 1 and blocks_x == 1) and blocks_y <= grid_y and blocks_x <= grid_x
    range_x, range_y = (blocks_x, blocks_y) if fits else (0, 0)
    one_d_w = 2 if kt % 2 == 0 else 1
    cores = grid_x * grid_y
    if range_y == 1 or (narrow and n > m):
        pcm, pcn = mt, _ceil(nt, cores)
        h, w = subblock(pcm, pcn, fp32)
        return TtnnMatmulConfig(
            "mcast_1d_in0", grid_x, grid_y, one_d_w, pcm, pcn, h, w, False, fidelity, fp32
        )
    if range_x == 1 or narrow:
        pcm, pcn = _ceil(mt, cores), nt
        h, w = subblock(pcm, pcn, fp32)
        return TtnnMatmulConfig(
            "mcast_1d_in1", grid_x, grid_y, one_d_w, pcm, pcn, h, w, False, fidelity, fp32
        )
    in0_block_w = kt // grid_x if kt % grid_x == 0 else 1
    pcm, pcn = _ceil(mt, grid_y), _ceil(nt, grid_x)
    bh, bw, in0_block_w = out_block(pcm, pcn, in0_block_w, dtype, arch_name)
    h, w = subblock(bh, bw, fp32)
    return TtnnMatmulConfig(
        "mcast_2d", grid_x, grid_y, in0_block_w, pcm, pcn, h, w, False, fidelity, fp32
    )
