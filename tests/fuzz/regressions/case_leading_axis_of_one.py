# Bug (found by benchmarks/fuzz.py, introduced by the extent-1 fix): a leading-axis
# reduction over a batch of 1 (`x[:, tile_m, tile_n].sum(0)`, x of shape (1, M, N)) was
# refused as a reduction over an axis of extent 1. Fixed in loom/frontend/surface.py: only
# a tile axis (one of the last two) of extent 1 is special; a leading axis loops once.
"""Fuzzed program fz_3898519fe3 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(1, 32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(), family=LeadingReduce(reduce=Reduce(op='sum', expr=Leaf(index=0), keepdim=False, dtype='fp32', correction=1)), formats='', arch=ArchChoice(base='blackhole_12x10', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_3898519fe3(x0: torch.Tensor):
    out0 = torch.empty([32, 32], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 32]):
        out0[tile_m, tile_n] = (torch.sum(x0[:, tile_m, tile_n], dim=0)).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(1, 32, 32, generator=gen).to(torch.float32)
    return (x0,)
