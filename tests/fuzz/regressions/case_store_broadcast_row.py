# The same bug for a broadcast row stored into a 2-D tile window
# (`out[tile_m, tile_n] = v[tile_n][None, :] + 1.0`).
"""Fuzzed program fz_9be2233a5d (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(64, 64), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False), LeafSpec(kind='row', dtype='bf16', upcast=False)), scalars=(), family=Pointwise(rank=2, outputs=(Output(expr=Binary(op='add', lhs=Leaf(index=1), rhs=Const(value=1.0)), dtype='fp32'),)), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_9be2233a5d(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([64, 64], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([64, 64]):
        out0[tile_m, tile_n] = ((x1[tile_n][None, :]) + 1.0).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(64, 64, generator=gen).to(torch.float32)
    x1 = torch.randn(64, generator=gen).to(torch.bfloat16)
    return (
        x0,
        x1,
    )
