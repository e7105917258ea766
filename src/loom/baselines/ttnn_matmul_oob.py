"""TTNN's out-of-box matmul program config: what `a @ b` gets with no program config.

Source of the rule (read, not copied): tenstorrent/tt-metal
``ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config.cpp`` and
``.../device/utilities/matmul_utilities.cpp`` at commit
001cea9a149df28de134c87b5324972bf4308d48 — ``generate_matmul_program_config`` sends
unsharded inputs with no user grid to ``create_simple_matmul_program_config``, which, for
all-DRAM-interleaved tensors (the GEMM_FLOPS out-of-box rows), picks:

* a *narrow* shape (``max(M, N) // min(M, N) > 8`` or a side of one tile) gets a 1-D
  multicast over the whole grid: in0 multicast when ``N > M`` (wide), in1 otherwise (tall)
  (``get_mcast_1d_config``: per-core rows or columns ``ceil(ceil(dim / cores) / 32)``,
  ``in0_block_w`` 2 when K tiles are even, else 1);
* otherwise a 1-D config when the 16x16-tile block grid has a single row or column, and a
  2-D multicast (``MatmulMultiCoreReuseMultiCastProgramConfig``) in every other case:
  ``per_core_M = ceil(Mt / grid_y)``, ``per_core_N = ceil(Nt / grid_x)``,
  ``in0_block_w = Kt / grid_x`` when ``grid_x`` divides ``Kt``, else 1;
* out blocks shrink, keeping the per-core factors nearest a square, until the circular
  buffers fit in L1 (``get_multi_dim_per_core_factor``), then the first out-subblock of
  the preference list that divides the out block (``get_matmul_subblock_params``).

Compute defaults when no compute kernel config is passed: ``WormholeComputeKernelConfig``
(LoFi, fp32 dest accumulation off; the same struct on Blackhole).

All sizes are in 32x32 tiles. ``max L1`` is the architecture's ``l1_usable_bytes``
(TT-Metal: lowest occupied L1 address minus the allocator base).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from loom.arch import load_arch
from loom.ir.formats import parse_format, tile_bytes

TILE = 32
SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/matmul/device/config/"
    "matmul_program_config.cpp @ 001cea9a149df28de134c87b5324972bf4308d48 "
    "(create_simple_matmul_program_config, all DRAM interleaved)"
)
DEFAULT_FIDELITY = "LoFi"
MCAST_INPUT_BUFFERING_DEPTH = 2
NARROW_RATIO = 8
SUBBLOCK_CHOICES: tuple[tuple[int, int], ...] = (
    (4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6),
    (5, 1), (1, 5), (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1),
)  # fmt: skip
"""(h, w) preference order of TT-Metal's SUBBLOCK_HW_CHOICES (8 tiles first)."""


@dataclass(frozen=True)
class TtnnMatmulConfig:
    """One TTNN matmul program config, in tiles.

    `per_core_m`/`per_core_n` are the output tiles a core owns; they are computed in
    out blocks of the per-core factors TTNN fits in L1 (`out_block_h/w`, derivable with
    :func:`out_block`)."""

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


@dataclass(frozen=True)
class CbSizes:
    """Bytes of one tile of each operand, and the L1 budget of the CB estimate."""

    in0: int
    in1: int
    interm: int
    max_l1: int

    def cbs(self, pm: int, pn: int, kw: int) -> int:
        """TT-Metal's get_estimated_size_of_cbs for interleaved inputs, no bias."""
        in0 = pm * kw * MCAST_INPUT_BUFFERING_DEPTH * self.in0
        in1 = pn * kw * MCAST_INPUT_BUFFERING_DEPTH * self.in1
        out = pm * pn * self.in0  # the output tile is estimated with in0's size
        return in0 + in1 + out + pm * pn * self.interm

    def fits(self, pm: int, pn: int, kw: int) -> bool:
        return self.cbs(pm, pn, kw) < self.max_l1


def _sizes(dtype: str, arch_name: str, fp32_dest_acc: bool) -> CbSizes:
    arch = load_arch(arch_name)
    tile = tile_bytes(parse_format(dtype).value)
    interm = tile_bytes("fp32") if fp32_dest_acc else max(tile, tile_bytes("bf16"))
    return CbSizes(tile, tile, interm, arch.l1_usable_bytes)


def is_narrow(height: int, width: int) -> bool:
    """TT-Metal's is_narrow_shape for all-DRAM tensors (sizes in elements)."""
    ratio = max(height, width) // min(height, width)
    return ratio > NARROW_RATIO or min(height, width) <= TILE


def subblock(block_h: int, block_w: int, fp32_dest_acc: bool) -> tuple[int, int]:
    """First (h, w) of the preference list dividing the block (<= 4 tiles in fp32 dest)."""
    for h, w in SUBBLOCK_CHOICES:
        if fp32_dest_acc and h * w > 4:
            continue
        if block_h % h == 0 and block_w % w == 0:
            return h, w
    return 1, 1


def _factors(n: int) -> list[int]:
    """n, 1, then n's divisors from n // 2 down to 2 (TT-Metal's candidate order)."""
    return [n, 1, *(f for f in range(n // 2, 1, -1) if n % f == 0)]


def multi_dim_factor(
    pm: int, pn: int, kw: int, sizes: CbSizes, adjust_k: bool
) -> tuple[int, int, int]:
    """Largest out block (nearest a square for each area) whose CBs fit in L1; with
    `adjust_k` the K block may shrink to a divisor of `kw` too."""
    if sizes.fits(pm, pn, kw):
        return pm, pn, kw
    by_area: dict[int, tuple[int, int]] = {}
    for fm in _factors(pm):
        for fn in _factors(pn):
            ratio = max(fm, fn) / min(fm, fn)
            old = by_area.get(fm * fn)
            if old is None or not max(old) / min(old) < ratio:
                by_area[fm * fn] = (fm, fn)
    k_floor = 1 if adjust_k else kw
    for fk in range(kw, k_floor - 1, -1):
        if kw % fk:
            continue
        for area in sorted(by_area, reverse=True):
            fm, fn = by_area[area]
            if sizes.fits(fm, fn, fk):
                return fm, fn, fk
    return 1, 1, 1


def out_block(
    per_core_m: int,
    per_core_n: int,
    in0_block_w: int,
    dtype: str,
    arch_name: str,
    fp32_dest_acc: bool = False,
) -> tuple[int, int, int]:
    """The out block (h, w) TTNN computes a core's output in, and its K block."""
    sizes = _sizes(dtype, arch_name, fp32_dest_acc)
    return multi_dim_factor(per_core_m, per_core_n, in0_block_w, sizes, False)


def _per_core_factor(sizes: CbSizes, kw: int) -> int:
    """get_per_core_factor: the largest square block (16, 8, 4, 2) whose CBs fit."""
    f = 16
    while f > 1:
        if sizes.fits(f, f, kw):
            return f
        f //= 2
    return 1


def _mcast_1d(
    m: int, k: int, n: int, grid_x: int, grid_y: int, sizes: CbSizes, mcast_in0: bool
) -> TtnnMatmulConfig:
    cores = grid_x * grid_y
    if mcast_in0:
        pm, pn = m // TILE, math.ceil(math.ceil(n / cores) / TILE)
    else:
        pm, pn = math.ceil(math.ceil(m / cores) / TILE), n // TILE
    kw = 2 if (k // TILE) % 2 == 0 else 1
    bh, bw, _ = multi_dim_factor(pm, pn, kw, sizes, adjust_k=False)
    sh, sw = subblock(bh, bw, False)
    return TtnnMatmulConfig(
        "mcast_1d_in0" if mcast_in0 else "mcast_1d_in1",
        grid_x, grid_y, kw, pm, pn, sh, sw, False, DEFAULT_FIDELITY, False,
    )  # fmt: skip


def oob_matmul_config(
    m: int, k: int, n: int, grid_x: int, grid_y: int, dtype: str, arch_name: str
) -> TtnnMatmulConfig:
    """The program config TTNN picks for an all-DRAM-interleaved [m,k] @ [k,n]."""
    sizes = _sizes(dtype, arch_name, fp32_dest_acc=False)
    mt, kt, nt = m // TILE, k // TILE, n // TILE
    wide = tall = False
    if is_narrow(m, n):
        wide = n > m
        tall = not wide
    per_core = _per_core_factor(sizes, 2)
    blocks_y = (mt - 1) // per_core + 1
    blocks_x = (nt - 1) // per_core + 1
    one_block = blocks_y == 1 and blocks_x == 1
    fits_grid = blocks_y <= grid_y and blocks_x <= grid_x
    range_x, range_y = (blocks_x, blocks_y) if not one_block and fits_grid else (0, 0)
    if range_y == 1 or wide:
        return _mcast_1d(m, k, n, grid_x, grid_y, sizes, mcast_in0=True)
    if range_x == 1 or tall:
        return _mcast_1d(m, k, n, grid_x, grid_y, sizes, mcast_in0=False)
    kw = kt // grid_x if kt % grid_x == 0 else 1
    pm, pn = math.ceil(mt / grid_y), math.ceil(nt / grid_x)
    bh, bw, kw = multi_dim_factor(pm, pn, kw, sizes, adjust_k=True)
    sh, sw = subblock(bh, bw, False)
    return TtnnMatmulConfig(
        "mcast_2d", grid_x, grid_y, kw, pm, pn, sh, sw, False, DEFAULT_FIDELITY, False
    )
