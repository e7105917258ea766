"""A TileLoom-style baseline: enumerate fixed tiles, rank by a roofline, profile the top-k.

TileLoom (Li et al., 2026; the Loom paper's Section 3 baseline and Table 3) generates
candidate kernels from power-of-two tile sizes and a fixed set of spatial templates,
prices them with a simple, non-symbolic performance model, and profiles the best few on
the device. Here the device is the timing simulator: this module proposes and ranks the
candidates (a pure function of the arch and the shape); the caller lowers and simulates
the top `k` and keeps the fastest, exactly as it simulates Loom's own schedules.

The model is a roofline per core: ``max(compute, DRAM, NoC)`` where compute is the
matmul tiles times the arch's cycles per tile, DRAM the bytes the core's copies read
at its share of the chip's all-cores DRAM rate, and NoC the multicast bytes at the
multicast rate. No pipelining choice, no overhead terms: double buffering is always on.

Buffering and engines: TileLoom's templates take the kernel's buffers as the compiler
lays them out, so its schedules use Loom's buffer plan unchanged: every load its own
circular buffer (flash attention's K and V apart) and each load's data-movement engine
chosen as for Loom's own schedules (`loom.arch.noc.choose_load_engines`); no engine is
pinned, unlike the TTNN attention baselines, whose source reads every operand in one
reader kernel.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from loom.arch import Arch
from loom.baselines.build import Policy
from loom.ir.scope import Scope

POW2 = (32, 64, 128, 256, 512)
SOURCE = "TileLoom (Li et al., 2026): power-of-two tiles, roofline ranking, top-k profiled"
DOUBLE = {"b_load": 1}


@dataclass(frozen=True)
class Ranked:
    policy: Policy
    modeled_cycles: float


def _roofline(arch: Arch, fidelity: str, mm_tiles: float, dram_bytes: float, cores: int,
              noc_bytes: float = 0.0) -> float:  # fmt: skip
    compute = mm_tiles * arch.matmul.peak_cycles(fidelity)
    dram = dram_bytes / (arch.dram.all_cores_bytes_per_cycle / max(cores, 1))
    noc = noc_bytes / arch.noc.multicast_bytes_per_cycle
    return max(compute, dram, noc)


def _ranked(
    view: tuple[tuple[str, int, str], ...],
    blocks: dict[str, int],
    multicast: tuple[str, ...],
    loop: Scope,
    cycles: float,
) -> Ranked:
    notes = (f"tileloom: roofline {cycles:.0f} cycles", f"rule: {SOURCE}")
    return Ranked(Policy("tileloom", view, blocks, multicast, {loop.key: DOUBLE}, notes), cycles)


def _fits(arch: Arch, tiles: float) -> bool:
    return tiles * arch.tile.bytes("bf16") <= arch.l1_usable_bytes


def _gemm(arch: Arch, shape: dict[str, int], fidelity: str) -> Iterator[Ranked]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    tile = arch.tile.bytes("bf16")
    for bm, bn, bk in itertools.product(POW2, POW2, POW2):
        if bm > m or bn > n or bk > k or k % bk:
            continue
        tm, tn, tk = bm // 32, bn // 32, bk // 32
        if not _fits(arch, 2 * (tm * tk + tk * tn) + 3 * tm * tn):
            continue
        cy, cx = min(arch.grid_y, math.ceil(m / bm)), min(arch.grid_x, math.ceil(n / bn))
        waves = math.ceil(m / bm / cy) * math.ceil(n / bn / cx)
        steps = waves * (k // bk)
        # the row/column senders read their slice from DRAM and multicast it
        dram = steps * (tm * tk + tk * tn) * tile / max(1, min(cx, cy))
        noc = steps * (tm * tk + tk * tn) * tile
        cycles = _roofline(arch, fidelity, steps * tm * tn * tk, dram, cx * cy, noc)
        view = (("y", cy, "tile_m"), ("x", cx, "tile_n"))
        blocks = {"tile_m": bm, "tile_n": bn, "tile_k": bk}
        yield _ranked(view, blocks, ("a", "b"), Scope("tile_k"), cycles)


def _attention(
    arch: Arch, shape: dict[str, int], fidelity: str, causal: bool = False
) -> Iterator[Ranked]:
    """Flash attention: query tiles along x (K/V multicast along the row), heads on y.
    Causal: each query tile visits the key tiles up to its own end (tile_n divides
    tile_m), about half of them, and cores along x no longer share K/V (each runs its
    own number of key tiles), so K/V are read per core."""
    bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
    tile = arch.tile.bytes("bf16")
    dt = d // 32
    for bm, bn in itertools.product(POW2, POW2):
        if bm > s or bn > s or s % bn or (causal and bm % bn):
            continue
        tm, tn = bm // 32, bn // 32
        if not _fits(arch, 2 * (tm * dt + 2 * tn * dt) + 3 * tm * tn + 3 * tm * dt):
            continue
        cx = min(arch.grid_x, math.ceil(s / bm))
        cy = min(arch.grid_y, bh)
        waves = math.ceil(s / bm / cx) * math.ceil(bh / cy)
        per_tile = (s + bm) / (2 * bn) if causal else s // bn
        steps = waves * per_tile
        kv = steps * 2 * tn * dt * tile
        share = 1 if causal else cx
        cycles = _roofline(arch, fidelity, steps * 2 * tm * tn * dt, kv / share, cx * cy,
                           0.0 if causal else kv)  # fmt: skip
        view = (("x", cx, "tile_m"), ("y", cy, "tile_b"))
        blocks = {"tile_b": 1, "tile_m": bm, "tile_n": bn}
        multicast = () if causal else ("k", "v")
        yield _ranked(view, blocks, multicast, Scope("tile_n"), cycles)


def _causal(arch: Arch, shape: dict[str, int], fidelity: str) -> Iterator[Ranked]:
    return _attention(arch, shape, fidelity, causal=True)


def _decode(arch: Arch, shape: dict[str, int], fidelity: str) -> Iterator[Ranked]:
    """Flash decode: one head per core, power-of-two KV splits gathered to the first."""
    bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
    tile = arch.tile.bytes("bf16")
    dt = d // 32
    cores = arch.grid_x * arch.grid_y
    for split, bn in itertools.product((1, 2, 4, 8), POW2):
        bs = s // split
        if s % split or bn > bs or bs % bn:
            continue
        tn = bn // 32
        if not _fits(arch, 2 * 2 * tn * dt + 3 * tn + 4 * dt):
            continue
        heads = max(1, min(bh, cores // split))
        waves = math.ceil(bh / heads)
        steps = waves * (bs // bn)
        kv = steps * 2 * tn * dt * tile
        cycles = _roofline(arch, fidelity, steps * 2 * tn * dt, kv, heads * split)
        cx = min(split, arch.grid_x)
        view = (("x", cx, "tile_s"), ("x", arch.grid_x // cx, "tile_b"),
                ("y", math.ceil(heads / (arch.grid_x // cx)), "tile_b"))  # fmt: skip
        if math.ceil(heads / (arch.grid_x // cx)) > arch.grid_y:
            continue
        yield _ranked(view, {"tile_b": 1, "tile_s": bs, "tile_n": bn}, (), Scope("tile_n"), cycles)


_KERNELS = {
    "gemm": _gemm,
    "flash_attention": _attention,
    "flash_attention_causal": _causal,
    "flash_decode": _decode,
}


def tileloom_candidates(
    kernel: str, arch: Arch, shape: dict[str, int], fidelity: str, top_k: int | None = 5
) -> tuple[Ranked, ...]:
    """The `top_k` candidates (all with None) by modeled cycles (ties: smaller blocks
    last, stable). The profiler walks the whole ranking with None: a candidate that does
    not build (its buffers overflow L1 by the lowering's exact count, looser than `_fits`)
    is skipped as a kernel that fails to compile on a card is, and the next one profiled."""
    make = _KERNELS.get(kernel)
    if make is None:
        return ()
    ranked = sorted(
        make(arch, shape, fidelity),
        key=lambda r: (r.modeled_cycles, tuple(-v for v in r.policy.block_sizes.values())),
    )
    return tuple(ranked[:top_k])
