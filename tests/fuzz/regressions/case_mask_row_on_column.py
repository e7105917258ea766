# Bug (found by benchmarks/fuzz.py): a mask along the columns on a column vector,
# `torch.where(tile_n.index < 16, v[tile_m][:, None], 0.0)`, gave a wrong answer (rel
# error 1.0): the (n,) mask times the (m, 1) column is an (m, n) value neither operand
# has, and the outer-broadcast rewrite skipped it because the mask is 1-D. Fixed in
# loom/frontend/core.py (`_outer_broadcast`): a lower-rank operand counts with leading
# axes of 1, and the column is broadcast to (m, n) first.
"""Fuzzed program fz_5020eb2cd9 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False), LeafSpec(kind='col', dtype='fp32', upcast=False)), scalars=(), family=Pointwise(rank=2, outputs=(Output(expr=Mask(axis='n', limit=16, arg=Leaf(index=1)), dtype='fp32'),)), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_5020eb2cd9(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([32, 32], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 32]):
        out0[tile_m, tile_n] = (torch.where(tile_n.index < 16, x1[tile_m][:, None], 0.0)).to(
            torch.float32
        )
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    x1 = torch.randn(32, generator=gen).to(torch.float32)
    return (
        x0,
        x1,
    )
