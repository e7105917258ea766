"""TTNN's norms, softmax and eltwise ops (no program config) as Schedules of Loom's kernels.

Each rule is its TTNN program factory's, read from tenstorrent/tt-metal; the Policy runs
Loom's own kernel of the op (`loom.eval.cases.LAYER_KERNELS`) under that rule, through the
same lowering and simulator as Loom's pick. All tensors live in DRAM, interleaved, bf16.

Work split, every factory here: ``tt::tt_metal::split_work_to_cores(grid, units)``: the
first ``min(units, cores)`` cores of the compute grid, ``ceil(units / cores)`` units on the
first ``units % cores`` of them and ``floor`` on the rest (`split_work`). A core works
through its units in order, one at a time.

``ttnn.rms_norm`` / ``ttnn.layer_norm`` (`NORM_SOURCE`, ``layernorm_multi_core``): units
are tile rows (32 rows of the whole hidden size); ``block_size`` = 4 with
``fp32_dest_acc_en`` else 8 (RMSNorm's default config has it off, LayerNorm's on:
`NORM_DEFAULTS`). The single-pass kernel keeps the whole row resident: ``cb_in0`` holds
``Wt`` tiles (rounded up to the block), the reader streams them in blocks of
``block_size``, compute reduces as they arrive, then normalises block by block into a
``2 * block_size`` output CB the writer drains; gamma/beta (``Wt`` tiles each) are read
once per core and kept. When the CBs (`norm_cb_bytes`) do not fit L1, LayerNorm switches
to its large-tensor kernels (CBs of 56 tiles with weights, the row re-read once per
pass); RMSNorm has no such path at that commit (``if (!rms_norm ...)``), so a row whose
CBs overflow L1 does not run (`TtnnRefusal`).

``ttnn.softmax(x, -1, numeric_stable=True)`` (`SOFTMAX_SOURCE`, the attention-optimized
factory that plain ``ttnn.softmax`` on the last dim runs): units are tile rows;
``block_size = find_max_divisor(Wt, 8)``; numerically stable (the max subtracted, as
Loom's kernel computes; TTNN's default ``numeric_stable=False`` skips that pass): ``cb_in0``,
``cb_x`` and ``cb_exps`` hold the whole row; when those CBs exceed 90% of L1 the large
kernel runs with 80-tile CBs and re-reads the row per pass (three reader passes).

``ttnn.softmax`` with ``SoftmaxShardedMultiCoreProgramConfig`` (`SOFTMAX_SHARDED_SOURCE`):
its validation asks for ``block_w * 32 == W`` (a shard is whole rows: height sharding),
``block_w % subblock_w == 0``, one shard per core of the config's grid (``M * K /
(block_w * block_h * 1024) == grid_x * grid_y``) and in place. `softmax_sharded_policy`
writes the config a user gives for the whole grid: the most cores (a sub-grid of the
device's) whose count divides the tile rows, ``block_h`` rows each, in one wave
(``subblock_w = find_max_divisor(Wt, 8)``). The shard lives in L1 on the card; here it is
read from DRAM as every baseline's input is. LayerNorm's sharded configs split the row
over the cores of a grid row (``block_w < Wt``) and gather partial statistics across them;
Loom's row kernels keep a row on one core, so those are not written here.

Binary ``ttnn.add`` / ``ttnn.mul`` (`BINARY_SOURCE`; SwiGLU as ``ttnn.mul(gate, up,
input_tensor_a_activations=[silu])``) and unary ``ttnn.gelu`` (`UNARY_SOURCE`): units
are output tiles (row-major over the tensor); every CB holds 2 tiles (double-buffered),
one tile per compute step.

As Loom schedules (what differs, and why it does not favour Loom):

* one tile row per block (``tile_m = 32``) on ``split_work``'s cores, laid out row-major
  over the grid (`spread`); a Loom core takes its rows round-robin over waves (row
  ``core + wave * cores``) where TTNN gives each core a contiguous range: the same count
  per core, and DRAM pages are interleaved over the banks either way;
* the resident row is Loom's persistent realization (the row and its intermediates in
  L1); the large-tensor path is Loom's looped realization (`loom.dataflow.looped_rows`)
  with a chunk of at most half the large-tensor CB, double-buffered (as deep as TTNN's
  CB). Loom's looped row makes two passes (statistics, output) where TTNN's large kernels
  make three: the baseline reads less than TTNN does;
* gamma/beta: TTNN's models keep them row-major (``[1, 1, N/32, 32]``, read by
  ``reader_unary_interleaved_ln_rm_gb`` as one N-element stick per core), so the cores
  together read N x 2 bytes per core from DRAM; Loom's 1-D weight is tile-padded (32
  rows), so one multicast of it (`WEIGHTS`) reads the bytes of 32 such sticks: the same
  DRAM bytes as TTNN at 32 cores, fewer beyond (a unicast per core would read 32 times
  TTNN's);
* every pass's row is loaded by the reader, as TTNN's reader kernel does
  (`READER_KERNEL`); gamma and beta go where Loom's buffer plan deals them;
* the row's input is single-buffered (``cb_in0`` holds one row, so the next row is read
  only once it is consumed) and its output double-buffered (Loom's granularity is the
  row; TTNN's output CB is two blocks of it). Loom's kernels keep the row's intermediates
  in fp32, so at hidden 4096 the resident row may not fit Loom's L1 plan where TTNN's
  bf16 CBs do: the output is then single-buffered (`layer_candidates`; a little slower
  than TTNN's streaming output), and where even that does not fit, the case has no
  baseline (the row says why) rather than a looped one that would read the row twice;
* eltwise blocks are one tile (TTNN's unit), double-buffered in and out; Loom maps the two
  grid axes to the mesh, so its view is the factorisation with the fewest tiles on the
  busiest core (`eltwise_view`); where that is more than TTNN's ``ceil(tiles / cores)``
  the note says by how much (the baseline then does a little more per core than TTNN).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from loom.baselines.build import Policy, spread
from loom.errors import ScheduleError

TILE = 32
TILE_BYTES = {"bf16": 2048, "fp32": 4096}
NORM_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/normalization/layernorm/device/"
    "layernorm_op_multi_core.cpp @ 5aa66d6b1ee519aca0ccd38dc85c0d0aaca5de3a"
)
NORM_DEFAULTS = (
    "default compute configs: ttnn/cpp/ttnn/operations/normalization/rmsnorm/rmsnorm.cpp @ "
    "09f752a4b2a5a4abb48e21255367d439b0776d8a (HiFi4, approx, fp32_acc off) and "
    "layernorm/layernorm.cpp (HiFi4, fp32_acc on)"
)
SOFTMAX_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/normalization/softmax/device/"
    "softmax_program_factory_attention_optimized.cpp @ 86aa094974e2a818d83a1588fe1ad61457e85693"
)
BINARY_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/eltwise/binary_ng/device/"
    "binary_ng_program_factory.cpp @ 5eb4ca29cafaf59e5ae4557c1f8bca46c3e2365f"
)
SOFTMAX_SHARDED_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/normalization/softmax/device/"
    "softmax_device_operation.cpp @ 0b6b67d7069aba9394e950bf5f0f9ff7c221d48b "
    "(validate, SoftmaxShardedMultiCoreProgramConfig)"
)
UNARY_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/eltwise/unary/device/"
    "unary_program_factory.cpp @ 689f9bd6a05457ae1f204dd96a01fb005cdb09f7"
)
READER_KERNEL = (
    "every pass's row is read by the factory's one reader kernel "
    "(``reader_unary_interleaved_ln*``, ``reader_unary_interleaved_sm*``); the writer "
    "kernel only writes the output"
)
"""Which engine loads the row in TTNN's row ops: the reader, every pass (`row_policy`).
The reader reads gamma and beta too, but as row-major sticks of N x 2 bytes per core;
Loom's tile-padded weights are one multicast per group, 32 times those bytes read by
one sender, so pinning them to the reader would charge TTNN for Loom's layout (RMSNorm
1024x2048 on Wormhole: 72 348 simulated cycles against 64 715 with the weight where
Loom's buffer plan deals it). They keep Loom's deal."""
LARGE_NORM_TILES = 56
"""LayerNorm's large-tensor CB length with gamma/beta (``with_weights_max_size``)."""
LARGE_SOFTMAX_TILES = 80
"""Softmax's large-kernel CB length (``cb_length = 80``)."""
SOFTMAX_L1_FRACTION = 0.9
"""Softmax switches to its large kernel when its CBs exceed this share of L1."""
WEIGHTS = {"rms_norm": ("w",), "layer_norm": ("w", "b")}
"""The 1-D weights of Loom's norm kernels (gamma, beta), multicast by the baselines."""
ROW_PIPELINE = {"grid": {"b_load": 0, "b_store": 1}}
SINGLE_STORE = {"grid": {"b_load": 0, "b_store": 0}}
LOOPED_PIPELINE = {"grid": {"b_load": 0, "b_store": 0}}
ELTWISE_PIPELINE = {"grid": {"b_load": 1, "b_store": 1}}


class TtnnRefusal(ScheduleError):
    """TTNN's own factory cannot run this shape (e.g. its CBs overflow L1)."""


@dataclass(frozen=True)
class WorkSplit:
    """``split_work_to_cores``: `cores` used, `most` units on the first of them, `least`
    on the rest."""

    cores: int
    most: int
    least: int


def split_work(units: int, cores: int) -> WorkSplit:
    used = min(units, cores)
    return WorkSplit(used, -(-units // used), units // used)


@dataclass(frozen=True)
class RowRule:
    """A row op's factory decisions for one shape."""

    split: WorkSplit
    block_size: int
    cb_bytes: int
    """The single-pass CBs' total (the factory's L1 check)."""
    large_cb_tiles: int
    """0: the whole row resident (single pass); else the large-tensor CB length."""


def find_max_divisor(n: int, most: int) -> int:
    """tt-metal's ``find_max_divisor``: the largest divisor of `n` not above `most`."""
    return max(d for d in range(1, most + 1) if n % d == 0)


def norm_cb_bytes(kernel: str, wt: int) -> tuple[int, int]:
    """(block_size, bytes of the single-pass CBs) of ``layernorm_multi_core`` for a row of
    `wt` tiles: RMSNorm with gamma (bf16 intermediates), LayerNorm with gamma and beta
    (fp32 intermediates), no fused pre-add, bf16 input and output."""
    rms = kernel == "rms_norm"
    block = 8 if rms else 4
    im = TILE_BYTES["bf16" if rms else "fp32"]
    bf = TILE_BYTES["bf16"]
    wtb = -(-wt // block) * block
    cbs = [
        wtb * bf,  # in0: the row
        2 * block * bf,  # out0
        wtb * im,  # im3: x^2 (or (x - E[x])^2)
        wtb * bf,  # in5: gamma
        2 * block * im,  # im5: gamma/beta buffering
        8 * im,  # im4
        2 * bf,  # in2: reduce scaler
        2 * bf,  # in3: epsilon
        2 * im,  # im2
    ]
    if not rms:
        cbs += [wtb * im, wtb * bf, 2 * im]  # im0: x - E[x]; in6: beta; im1
    return block, sum(cbs)


def norm_rule(kernel: str, shape: dict[str, int], cores: int, l1_bytes: int) -> RowRule:
    """``layernorm_multi_core``'s split, block and path for `kernel` (rms_norm or
    layer_norm) at [M, N] on `cores` cores with `l1_bytes` of L1 for CBs."""
    block, cb = norm_cb_bytes(kernel, shape["N"] // TILE)
    split = split_work(shape["M"] // TILE, cores)
    if cb <= l1_bytes:
        return RowRule(split, block, cb, 0)
    if kernel == "rms_norm":
        raise TtnnRefusal(
            f"TTNN's interleaved RMSNorm needs {cb:,} bytes of CBs for a row of "
            f"{shape['N']} (> {l1_bytes:,} of L1) and has no large-tensor path ({NORM_SOURCE})"
        )
    return RowRule(split, block, cb, LARGE_NORM_TILES)


def softmax_rule(shape: dict[str, int], cores: int, l1_total_bytes: int) -> RowRule:
    """The attention-optimized softmax factory's split, block and path (numerically
    stable, bf16 intermediates) at [M, N] on `cores` cores; `l1_total_bytes` is the
    core's L1 (``l1_size_per_core``), of which the CBs may take 90%."""
    wt = shape["N"] // TILE
    block = find_max_divisor(wt, 8)
    bf = TILE_BYTES["bf16"]
    # in0 (the row), cb_exps and cb_x hold Wt tiles; out0 two blocks; five single tiles
    cb = 3 * wt * bf + 2 * block * bf + 5 * bf
    large = LARGE_SOFTMAX_TILES if cb > SOFTMAX_L1_FRACTION * l1_total_bytes else 0
    return RowRule(split_work(shape["M"] // TILE, cores), block, cb, large)


def sharded_grid(mt: int, grid: tuple[int, int]) -> tuple[int, int, int]:
    """(grid_x, grid_y, block_h) of a height-sharded config of `mt` tile rows on a sub-grid
    of `grid`: the most cores whose count divides `mt` (ties: the wider grid)."""
    options = [
        (gx * gy, gx, gy) for gx in range(1, grid[0] + 1) for gy in range(1, grid[1] + 1)
        if mt % (gx * gy) == 0
    ]  # fmt: skip
    cores, gx, gy = max(options)
    return gx, gy, mt // cores


def softmax_sharded_policy(shape: dict[str, int], grid: tuple[int, int]) -> Policy:
    """``ttnn-softmax-sharded``: the height-sharded program config on the most cores of
    `grid` that divide the tile rows, one ``block_h``-row block each."""
    wt = shape["N"] // TILE
    gx, gy, block_h = sharded_grid(shape["M"] // TILE, grid)
    detail = (
        f"ttnn-softmax-sharded: grid {gx}x{gy}, block_h {block_h}, block_w {wt}, "
        f"subblock_w {find_max_divisor(wt, 8)}: one shard per core, the rows resident"
    )
    notes = (detail, f"rule: {SOFTMAX_SHARDED_SOURCE}; kernel: {SOFTMAX_SOURCE}")
    view = (("x", gx, "tile_m"), ("y", gy, "tile_m"))
    blocks = {"tile_m": block_h * TILE}
    pipeline = {"grid": {"b_load": 0, "b_store": 0}}
    return Policy("ttnn-softmax-sharded", view, blocks, pipeline=pipeline, notes=notes,
                  realization="persistent")  # fmt: skip


def _chunk(wt: int, cb_tiles: int) -> int:
    """The looped chunk (tiles) standing for a large-tensor CB of `cb_tiles`: the
    largest divisor of the row's tiles that, double-buffered, fits the CB."""
    return find_max_divisor(wt, cb_tiles // 2)


def row_policy(
    kernel: str,
    shape: dict[str, int],
    grid: tuple[int, int],
    l1_usable: int,
    l1_total: int,
    row_tensor: str = "x",
) -> Policy:
    """The Policy of TTNN's `kernel` (rms_norm, layer_norm or softmax) at [M, N] on
    `grid` (x, y); `row_tensor` names the loaded row whose looped chunk is
    ``tile_<row_tensor>_d1``. TtnnRefusal where TTNN's factory cannot run it."""
    cores = grid[0] * grid[1]
    if kernel == "softmax":
        rule, source = softmax_rule(shape, cores, l1_total), SOFTMAX_SOURCE
    else:
        rule, source = norm_rule(kernel, shape, cores, l1_usable), NORM_SOURCE
    name = f"ttnn-{kernel.replace('_', '-')}"
    split = rule.split
    detail = (
        f"{name}: {split.cores} cores, {split.most}/{split.least} tile rows each, "
        f"block_size {rule.block_size}, single-pass CBs {rule.cb_bytes:,} B"
    )
    blocks = {"tile_m": TILE}
    if rule.large_cb_tiles:
        wt = shape["N"] // TILE
        chunk = _chunk(wt, rule.large_cb_tiles)
        blocks[f"tile_{row_tensor}_d1"] = chunk * TILE
        detail += (
            f" > L1: large-tensor kernel ({rule.large_cb_tiles}-tile CBs), looped in "
            f"chunks of {chunk} tiles"
        )
        pipeline = {**LOOPED_PIPELINE, f"loop:tile_{row_tensor}_d1": {"b_load": 1, "b_store": 1}}
        realization = "looped"
    else:
        detail += ": the row resident (persistent)"
        pipeline, realization = ROW_PIPELINE, "persistent"
    notes = (detail, f"rule: {source}" + (f"; {NORM_DEFAULTS}" if kernel != "softmax" else ""))
    view = spread(split.cores, grid[0], "tile_m")
    engines = {row_tensor: "reader"}  # `READER_KERNEL`
    return Policy(name, view, blocks, WEIGHTS.get(kernel, ()), pipeline, notes,
                  realization=realization, load_engines=engines)  # fmt: skip


def eltwise_view(
    shape: dict[str, int], grid: tuple[int, int]
) -> tuple[tuple[tuple[str, int, str], ...], int]:
    """The core view of one-tile blocks over [M, N] on `grid` with the fewest tiles on
    the busiest core (ties: fewer cores), and that count: 2-D (rows of cores over M,
    columns over N) or one axis spread row-major over the grid."""
    mt, nt = shape["M"] // TILE, shape["N"] // TILE
    gx, gy = grid
    options: list[tuple[int, int, tuple[tuple[str, int, str], ...]]] = []
    for rows in range(1, gy + 1):
        for cols in range(1, gx + 1):
            load = -(-mt // rows) * -(-nt // cols)
            options.append((load, rows * cols, (("y", rows, "tile_m"), ("x", cols, "tile_n"))))
    for axis, extent, other in (("tile_n", nt, mt), ("tile_m", mt, nt)):
        used = min(extent, gx * gy)
        options.append((-(-extent // used) * other, used, spread(used, gx, axis)))
    load, _, view = min(options, key=lambda o: (o[0], o[1]))
    return view, load


ELTWISE = {
    "residual_add": ("ttnn-add", "ttnn.add(x, h)", BINARY_SOURCE),
    "swiglu": (
        "ttnn-mul-silu",
        "ttnn.mul(gate, up, input_tensor_a_activations=[silu])",
        BINARY_SOURCE,
    ),
    "gelu": ("ttnn-gelu", "ttnn.gelu(x)", UNARY_SOURCE),
}
"""Loom's eltwise kernel -> (baseline name, the TTNN call it stands for, its factory)."""


def eltwise_policy(kernel: str, shape: dict[str, int], grid: tuple[int, int]) -> Policy:
    """The Policy of TTNN's eltwise op for `kernel` (`ELTWISE`) at [M, N] on `grid`."""
    name, call, source = ELTWISE[kernel]
    tiles = (shape["M"] // TILE) * (shape["N"] // TILE)
    split = split_work(tiles, grid[0] * grid[1])
    view, load = eltwise_view(shape, grid)
    detail = (
        f"{name} ({call}): {split.cores} cores, {split.most}/{split.least} tiles each, "
        f"one tile per step, 2-tile CBs"
    )
    if load > split.most:
        detail += f"; Loom's view puts {load} on the busiest core (+{load / split.most - 1:.1%})"
    blocks = {"tile_m": TILE, "tile_n": TILE}
    notes = (detail, f"rule: {source}")
    return Policy(name, view, blocks, pipeline=ELTWISE_PIPELINE, notes=notes)


def layer_candidates(kernel: str, shape: dict[str, int], arch_grid: tuple[int, int],
                     l1_usable: int, l1_total: int) -> tuple[Policy, ...]:  # fmt: skip
    """TTNN's baseline of a layer op (`LAYER_BASELINES`) as the evaluation's candidates:
    one Policy, and for a resident row also its variant with a single-buffered output
    (`SINGLE_STORE`), for the rows Loom's L1 plan cannot double-buffer (Loom's kernel keeps
    its row's intermediates in fp32 where TTNN's CBs are bf16); the evaluation simulates
    those that build and keeps the faster."""
    if kernel in ELTWISE:
        return (eltwise_policy(kernel, shape, arch_grid),)
    policy = row_policy(kernel, shape, arch_grid, l1_usable, l1_total)
    if policy.realization != "persistent":
        return (policy,)
    single = replace(policy, pipeline=SINGLE_STORE,
                     notes=(*policy.notes, "output single-buffered (Loom's L1 plan)"))  # fmt: skip
    return (policy, single)


LAYER_BASELINES = {
    "rms_norm": "ttnn-rms-norm",
    "layer_norm": "ttnn-layer-norm",
    "softmax": "ttnn-softmax",
    **{k: v[0] for k, v in ELTWISE.items()},
}
"""Each layer op's TTNN baseline (no program config)."""
