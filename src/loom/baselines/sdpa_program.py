"""TTNN's SDPA compute and mask as rewrites of the lowered program of Loom's attention kernels.

`ttnn_sdpa.sdpa_policy` gives TTNN's schedule (chunks, grid split, K/V chains, engines);
the program lowered from it still computes what Loom's kernels compute. Two things TTNN's
kernel does differently, which change the time but not the result:

- `generated_masks`: TTNN's writer kernel generates the causal mask tiles in L1, where
  Loom's causal kernel reads the query and key tile indices its mask is computed from;
- `ttnn_softmax`: TTNN's exp takes the softmax scale as an argument and TTNN adds the mask
  to the diagonal key chunk only, where Loom's kernels multiply every score block by the
  scale and compute the mask on every block.

Every TTNN attention policy names the ones its kernel does (`Policy.rewrites`, set by
`ttnn_sdpa.sdpa_policy` and `sdpa_decode_policy`: TTNN's decode kernel also scales inside
exp, `DECODE_SOFTMAX_SOURCE`), and `source_program` applies them: `loom eval`, `loom sweep`
and the calibration against TTNN's published SDPA times
(`benchmarks/calibration_attention.py`) all lower a baseline through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from loom.baselines.build import Policy
from loom.baselines.ttnn_sdpa import MASK_ON_WRITER
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    CExpr,
    Compute,
    FillExpr,
    IfCore,
    Loop,
    MatmulExpr,
    Parallel,
    Program,
    ReadDram,
    Reserve,
    Stmt,
    Wait,
)

SOFTMAX_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/kernels/compute/"
    "compute_common.hpp (sub_exp_block_bcast_cols_inplace: exp_tile_init with scale_fp32, "
    "the row sums packed with L1 accumulation) and the SDPA compute kernels (the mask tile "
    "added to the diagonal key chunk only); stored version of 2026"
)
DECODE_SOFTMAX_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa_decode/device/kernels/"
    'compute/sdpa_flash_decode.cpp @ 00d8eec3a0b8ea88c9d8b8f6d70caee39366d487 ("the '
    'scaling is fused into exp both in exp(x - max) and exp(prev_max - cur_max)": '
    "sub_exp_block_bcast_cols_inplace<..., scale_fp32, ...>, no score multiply)"
)


def _rewrite(stmts: tuple[Stmt, ...], edit) -> tuple[Stmt, ...]:  # type: ignore[no-untyped-def]
    """`stmts` with `edit(stmt)` (a statement, or None to drop it) applied at every depth."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Loop | Reserve | Wait):
            s = dataclasses.replace(s, body=_rewrite(s.body, edit))
        elif isinstance(s, IfCore):
            s = dataclasses.replace(s, then=_rewrite(s.then, edit), orelse=_rewrite(s.orelse, edit))
        elif isinstance(s, Parallel):
            s = dataclasses.replace(s, copies=_rewrite(s.copies, edit))
        got = edit(s)
        if got is not None:
            out.append(got)
    return tuple(out)


def generated_masks(program: Program) -> Program:
    """`program` without the DRAM reads of the causal mask's inputs: TTNN's writer kernel
    generates the mask tiles in L1 (`ttnn_sdpa.MASK_SOURCE`), where Loom's causal kernel reads the
    query and key tile indices the mask is computed from (a 1 x S fp32 row stored as whole
    tiles: 4 KB per key tile, about half the K/V bytes of a step at bfp8). The buffers are
    still reserved and pushed, without data movement."""

    def edit(s: Stmt) -> Stmt | None:
        return None if isinstance(s, ReadDram) and s.tensor in MASK_ON_WRITER else s

    return dataclasses.replace(
        program, reader=_rewrite(program.reader, edit), writer=_rewrite(program.writer, edit)
    )


def ttnn_softmax(program: Program) -> Program:
    """`program` with TTNN's score arithmetic (`SOFTMAX_SOURCE`): TTNN's exp takes the
    softmax scale as an argument (`exp(scale * (s - max))` in one SFPU pass; the
    architecture's 70-cycle exp was fitted on TTNN's counters with the scale inside), so
    the separate `scores * scale` multiply is dropped; and TTNN adds its generated mask
    tile to the diagonal key chunk only, where Loom's causal kernel computes the mask on
    every block from the tile indices (about 60% of the FPU time of the score matmul at
    HiFi4), so the mask term (the subtraction of a subexpression reading the mask inputs,
    `MASK_ON_WRITER`) is dropped. Where Loom's frontend moved the scale onto the query
    block (`(q * scale) @ k.T`), that once-per-chunk multiply is dropped instead (its
    buffer is still reserved and pushed; the matmul reads it unscaled, as TTNN's does).
    Left out: the diagonal chunk's one mask add (q x k tiles at the FPU add rate once per
    query chunk, under 2% of a diagonal step)."""
    mask = {b.name for b in program.buffers if b.name.removesuffix("_tile") in MASK_ON_WRITER}

    def reads_mask(e: CExpr) -> bool:
        if isinstance(e, BlockRef):
            return e.buffer in mask
        return any(reads_mask(v) for v in vars(e).values() if isinstance(v, CExpr))

    def scores(e: CExpr) -> CExpr:
        match e:
            case BinaryExpr(op="sub", lhs=lhs, rhs=rhs) if reads_mask(rhs):
                return scores(lhs)
            case BinaryExpr(op="mul", lhs=MatmulExpr() as mm, rhs=FillExpr()):
                return mm
        return e

    operands = _matmul_operands(program.compute)

    def edit(s: Stmt) -> Stmt | None:
        if not isinstance(s, Compute):
            return s
        match s.expr:  # the scale the frontend moved onto the query block (loom.frontend.hoist)
            case BinaryExpr(op="mul", lhs=BlockRef(), rhs=FillExpr()) if s.dst in operands:
                return None
        return dataclasses.replace(s, expr=scores(s.expr))

    return dataclasses.replace(program, compute=_rewrite(program.compute, edit))


def _matmul_operands(stmts: tuple[Stmt, ...]) -> frozenset[str]:
    """The buffers some matmul of `stmts` reads as an operand."""
    found: set[str] = set()

    def visit(e: CExpr) -> None:
        if isinstance(e, MatmulExpr):
            found.update(x.buffer for x in (e.lhs, e.rhs) if isinstance(x, BlockRef))
        for v in vars(e).values():
            if isinstance(v, CExpr):
                visit(v)

    def edit(s: Stmt) -> Stmt:
        if isinstance(s, Compute):
            visit(s.expr)
        return s

    _rewrite(stmts, edit)
    return frozenset(found)


REWRITES: dict[str, Callable[[Program], Program]] = {
    "ttnn_softmax": ttnn_softmax,
    "generated_masks": generated_masks,
}
"""The rewrites a baseline policy may name (`Policy.rewrites`)."""


def source_program(policy: Policy, program: Program) -> Program:
    """`program` (lowered from `policy`'s schedule) as the policy's source computes it:
    each of `policy.rewrites` applied (module doc)."""
    for name in policy.rewrites:
        program = REWRITES[name](program)
    return program
