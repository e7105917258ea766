# The same reduction without keepdim: refused by name (an axis of extent 1), as
# docs/helion-surface.md lists it.
"""Fuzzed program fz_d0493aadf9 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 64), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False), LeafSpec(kind='row', dtype='fp32', upcast=False)), scalars=(), family=SliceReduce(axis=0, reduce=Reduce(op='amax', expr=Leaf(index=1), keepdim=False, dtype='fp32', correction=1), center=None), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_d0493aadf9(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([64], dtype=torch.float32, device=x0.device)
    for tile_n in hl.tile(64):
        red = torch.amax(x1[tile_n][None, :], dim=0)
        out0[tile_n] = (red).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 64, generator=gen).to(torch.float32)
    x1 = torch.randn(64, generator=gen).to(torch.float32)
    return (
        x0,
        x1,
    )
