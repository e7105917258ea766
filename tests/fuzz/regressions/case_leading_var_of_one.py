# Bug (found by benchmarks/fuzz.py): var over a leading axis of extent 1 with keepdim
# (`torch.var(x[:, tile_m, tile_n], dim=0, correction=0, keepdim=True)`, x of shape
# (1, M, N)) was refused: its keepdim mean has the slice's shape, so the second loop took
# it for a value along the axis computed by the first loop. Fixed in
# loom/frontend/leading.py: over one slice such a value is read as it is.
"""Fuzzed program fz_8eecd31e72 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(1, 32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=True), LeafSpec(kind='tile', dtype='fp32', upcast=False)), scalars=(), family=LeadingReduce(reduce=Reduce(op='var', expr=Leaf(index=0), keepdim=True, dtype='fp32', correction=0)), formats='', arch=ArchChoice(base='blackhole_12x10', grid_y=7, grid_x=1, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_8eecd31e72(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([1, 32, 32], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 32]):
        out0[:, tile_m, tile_n] = (
            torch.var(x0[:, tile_m, tile_n].float(), dim=0, correction=0, keepdim=True)
        ).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(1, 32, 32, generator=gen).to(torch.float32)
    x1 = torch.randn(1, 32, 32, generator=gen).to(torch.float32)
    return (
        x0,
        x1,
    )
