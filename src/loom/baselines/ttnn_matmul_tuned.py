"""`ttnn-matmul-tuned` for every GEMM shape: the legal 2-D multicast program configs a
performance engineer tuning TTNN could ship (which is fastest is the evaluation's to
find: it simulates, this package does not).

A ``MatmulMultiCoreReuseMultiCastProgramConfig`` fixes the grid, each core's output
region (``per_core_M x per_core_N`` tiles), the out block it is computed in
(``out_block_h x out_block_w``), the K block ``in0_block_w`` and the output subblock.
The candidates, all on the whole grid (every published manual config, GEMM_FLOPS.md @
06bd3735, uses the whole grid; a smaller one only gives a core more work):

* the grid's rows own M and its columns N (``transpose_mcast=False``), and, where the grid
  is not square, the other way (``transpose_mcast=True``); ``per_core_M = ceil(Mt /
  rows)``, ``per_core_N = ceil(Nt / columns)``, the smallest regions the grid allows;
* ``in0_block_w``: the divisors of Kt up to `MAX_IN0_BLOCK_W` (the published configs use
  2 to 16), the `KW_CHOICES` largest of them;
* the out block: for each of those, the largest (then squarest) divisors of the per-core
  region whose circular buffers fit L1 under the 2-D multicast program factory's rule
  (``matmul_multicore_reuse_mcast_2d_program_factory.cpp`` @
  043b5ac261d74cd5543a2d73edd684ac5446bdc1, all inputs interleaved, bf16 output with
  ``fp32_dest_acc_en=False``): in0 ``2 * out_block_h * in0_block_w`` tiles, in1 ``2 *
  out_block_w * in0_block_w`` (double-buffered when K has more than one block), the
  output ``out_block_h * out_block_w``, its intermediate CB sharing it (the formats
  match); `ttnn_matmul_oob.multi_dim_factor` walks the sizes in TTNN's own order;
* the output subblock: TTNN's preference list's first that divides the out block
  (`ttnn_matmul_oob.subblock`). Loom's lowering has no subblocks (the matrix engine's
  cost per tile is the same): the notes record it.

The shape's published manual config (`ttnn_matmul.tuned_policy`), where there is one,
is a candidate too, so the tuned baseline is never slower than the published one.
Bounded: at most 2 x `KW_CHOICES` + 1 candidates per shape.
"""

from __future__ import annotations

from loom.arch import load_arch
from loom.baselines.build import Policy
from loom.baselines.ttnn_matmul import config_policy, tuned_policy
from loom.baselines.ttnn_matmul_oob import (
    DEFAULT_FIDELITY,
    CbSizes,
    TtnnMatmulConfig,
    multi_dim_factor,
    subblock,
)
from loom.ir.formats import tile_bytes

TILE = 32
MAX_IN0_BLOCK_W = 16
KW_CHOICES = 4
SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/matmul/device/factory/"
    "matmul_multicore_reuse_mcast_2d_program_factory.cpp @ "
    "043b5ac261d74cd5543a2d73edd684ac5446bdc1 (CB sizes); subblock order of "
    "matmul_program_config.cpp @ 001cea9a149df28de134c87b5324972bf4308d48"
)


def factory_sizes(arch_name: str, dtype: str = "bf16") -> CbSizes:
    """The 2-D factory's CB rule as a `CbSizes`: no separate intermediate CB (it shares
    the output's when the formats match, bf16 output without fp32 accumulation)."""
    tile = tile_bytes(dtype)
    return CbSizes(tile, tile, 0, load_arch(arch_name).l1_usable_bytes)


def in0_block_widths(kt: int) -> tuple[int, ...]:
    """The `KW_CHOICES` largest divisors of `kt` up to `MAX_IN0_BLOCK_W`, largest first."""
    divisors = [d for d in range(min(kt, MAX_IN0_BLOCK_W), 0, -1) if kt % d == 0]
    return tuple(divisors[:KW_CHOICES])


def tuned_configs(
    shape: dict[str, int], arch_name: str, grid: tuple[int, int]
) -> tuple[tuple[TtnnMatmulConfig, tuple[int, int]], ...]:
    """Every enumerated config with its out block (h, w), orientation major."""
    mt, kt, nt = shape["M"] // TILE, shape["K"] // TILE, shape["N"] // TILE
    gx, gy = grid
    sizes = factory_sizes(arch_name)
    out = []
    for transpose in (False, True) if gx != gy else (False,):
        rows, cols = (gx, gy) if transpose else (gy, gx)
        pm, pn = -(-mt // rows), -(-nt // cols)
        for kw in in0_block_widths(kt):
            bh, bw, _ = multi_dim_factor(pm, pn, kw, sizes, adjust_k=False)
            if not sizes.fits(bh, bw, kw):
                continue
            sh, sw = subblock(bh, bw, False)
            cfg = TtnnMatmulConfig(
                "mcast_2d", gx, gy, kw, pm, pn, sh, sw, transpose, DEFAULT_FIDELITY, False
            )
            out.append((cfg, (bh, bw)))
    return tuple(out)


def matmul_tuned_candidates(
    shape: dict[str, int], arch_name: str, grid: tuple[int, int]
) -> tuple[Policy, ...]:
    """`ttnn-matmul-tuned`'s candidates: the published config (if any), then each
    enumerated 2-D multicast config (the evaluation simulates them, keeps the fastest)."""
    configs = tuned_configs(shape, arch_name, grid)
    published = tuned_policy(shape, arch_name)
    out = [published] if published is not None else []
    sizes = factory_sizes(arch_name)
    for cfg, block in configs:
        cb = sizes.cbs(block[0], block[1], cfg.in0_block_w)
        note = (
            f"tuned over TTNN's 2-D multicast configs ({len(configs)} enumerated"
            f"{' + the published one' if published else ''}): {cb} B of CBs <= "
            f"{sizes.max_l1} B; rule: {SOURCE}"
        )
        out.append(config_policy("ttnn-matmul-tuned", cfg, shape, block, note))
    seen: set[tuple[object, ...]] = set()
    unique = []
    for p in out:
        key = (p.view, tuple(sorted(p.block_sizes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return tuple(unique)
