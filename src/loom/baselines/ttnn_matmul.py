"""TTNN matmul configs as Schedules of the shipped gemm kernel (out-of-box and tuned).

A TTNN program config fixes the cores, each core's output region (`per_core_M x
per_core_N` tiles, computed in out blocks), the K block `in0_block_w` and which operand
is multicast. Written as a Loom schedule: the out block is the (tile_m, tile_n) block, the
per-core region is covered by waves, `in0_block_w` is tile_k, inputs double-buffered
(TT-Metal's MCAST_INPUT_BUFFERING_DEPTH = 2), the output single-buffered.

* 2-D multicast: rows of cores own M, columns own N; A is multicast along each row, B
  down each column.
* 1-D in0 multicast: the cores (row-major over the grid) split N; A goes to all of them.
* 1-D in1 multicast: the cores split M; B goes to all of them.

Tuned configs are the manual rows of tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (tenstorrent/
tt-metal @ 06bd3735f7df2921d8195d732c14eba433e4a32d), reconstructed from
tests/ttnn/unit_tests/benchmarks/test_benchmark.py (bf16 rows of the calibration tables,
copied into data/ttnn_matmul_tuned.csv). Their in0 and output are L1-sharded on the
card; here every tensor is in DRAM, as for every other policy. The evaluation's
`ttnn-matmul-tuned` searches every shape (`loom.baselines.ttnn_matmul_tuned`), the
published config one of its candidates.
"""

from __future__ import annotations

import csv
import functools
import math
from dataclasses import dataclass
from pathlib import Path

from loom.baselines.build import Policy, spread
from loom.baselines.ttnn_matmul_oob import (
    SOURCE,
    TtnnMatmulConfig,
    oob_matmul_config,
    out_block,
)
from loom.ir.scope import Scope

TILE = 32
TUNED_CSV = Path(__file__).parent / "data" / "ttnn_matmul_tuned.csv"
TUNED_SOURCE = (
    "tenstorrent/tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md @ 06bd3735 manual table; "
    "config from tests/ttnn/unit_tests/benchmarks/test_benchmark.py"
)
DOUBLE_INPUTS = {Scope("tile_k").key: {"b_load": 1}}


def config_policy(
    name: str, cfg: TtnnMatmulConfig, shape: dict[str, int], block: tuple[int, int], note: str
) -> Policy:
    """The gemm Policy of one TTNN config whose out block is `block` (h, w tiles). Its
    partial sums live in the output block in bf16 (placement ``output``): the tuned rows
    ran with fp32_dest_acc_en=False and packer_l1_acc=True, and the out-of-box default
    (fp32_dest_acc_en=False) keeps the intermediate CB in the output's format, sharing
    the output CB (tt-metal matmul program factories: interm0 and out share one CB when
    their data formats match)."""
    mt, nt = shape["M"] // TILE, shape["N"] // TILE
    bh, bw = block
    blocks = {"tile_m": bh * TILE, "tile_n": bw * TILE, "tile_k": cfg.in0_block_w * TILE}
    detail = (
        f"{cfg.kind} grid {cfg.grid_x}x{cfg.grid_y} per_core {cfg.per_core_m}x{cfg.per_core_n} "
        f"out_block {bh}x{bw} in0_block_w {cfg.in0_block_w} subblock "
        f"{cfg.out_subblock_h}x{cfg.out_subblock_w} fidelity {cfg.math_fidelity}"
        + (" transpose_mcast" if cfg.transpose_mcast else "")
    )
    notes = (f"{name}: {detail}", f"rule: {note}")
    if cfg.kind == "mcast_1d_in0":
        view = spread(math.ceil(nt / cfg.per_core_n), cfg.grid_x, "tile_n")
        return Policy(name, view, blocks, ("a",), DOUBLE_INPUTS, notes, "output")
    if cfg.kind == "mcast_1d_in1":
        view = spread(math.ceil(mt / cfg.per_core_m), cfg.grid_x, "tile_m")
        return Policy(name, view, blocks, ("b",), DOUBLE_INPUTS, notes, "output")
    rows = math.ceil(mt / cfg.per_core_m)
    cols = math.ceil(nt / cfg.per_core_n)
    # transpose_mcast: the grid's columns own M and its rows N
    m_dim, n_dim = ("x", "y") if cfg.transpose_mcast else ("y", "x")
    view = ((m_dim, rows, "tile_m"), (n_dim, cols, "tile_n"))
    mcast = ("a", "b") if cfg.kind == "mcast_2d" else ()
    return Policy(name, view, blocks, mcast, DOUBLE_INPUTS, notes, "output")


def oob_policy(shape: dict[str, int], arch_name: str, grid: tuple[int, int]) -> Policy:
    """`ttnn-matmul-oob`: what `a @ b` gets on `grid` (x, y) with no program config."""
    m, k, n = shape["M"], shape["K"], shape["N"]
    cfg = oob_matmul_config(m, k, n, grid[0], grid[1], "bf16", arch_name)
    bh, bw, _ = out_block(cfg.per_core_m, cfg.per_core_n, cfg.in0_block_w, "bf16", arch_name)
    return config_policy("ttnn-matmul-oob", cfg, shape, (bh, bw), SOURCE)


@dataclass(frozen=True)
class TunedRow:
    arch: str
    m: int
    k: int
    n: int
    config: TtnnMatmulConfig
    out_block: tuple[int, int]
    in0_sharded: bool
    out_sharded: bool


@functools.cache
def tuned_rows() -> tuple[TunedRow, ...]:
    rows = []
    with open(TUNED_CSV, newline="") as f:
        for r in csv.DictReader(f):
            cfg = TtnnMatmulConfig(
                "mcast_2d",
                int(r["grid_x"]),
                int(r["grid_y"]),
                int(r["in0_block_w"]),
                int(r["per_core_M"]),
                int(r["per_core_N"]),
                int(r["out_subblock_h"]),
                int(r["out_subblock_w"]),
                False,
                "HiFi2",
                False,
            )
            rows.append(
                TunedRow(
                    r["arch"],
                    int(r["M"]),
                    int(r["K"]),
                    int(r["N"]),
                    cfg,
                    (int(r["out_block_h"]), int(r["out_block_w"])),
                    r["in0_sharded"] == "True",
                    r["out_sharded"] == "True",
                )
            )
    return tuple(rows)


def tuned_row(shape: dict[str, int], arch_name: str) -> TunedRow | None:
    for row in tuned_rows():
        if (row.arch, row.m, row.k, row.n) == (arch_name, shape["M"], shape["K"], shape["N"]):
            return row
    return None


def tuned_policy(shape: dict[str, int], arch_name: str) -> Policy | None:
    """`ttnn-matmul-tuned`: the published manual config of this shape, if there is one."""
    row = tuned_row(shape, arch_name)
    if row is None:
        return None
    note = f"{TUNED_SOURCE} (in0_sharded={row.in0_sharded}, out_sharded={row.out_sharded})"
    return config_policy("ttnn-matmul-tuned", row.config, shape, row.out_block, note)


def tuned_shapes(arch_name: str) -> tuple[dict[str, int], ...]:
    return tuple({"M": r.m, "N": r.n, "K": r.k} for r in tuned_rows() if r.arch == arch_name)
