# Found by benchmarks/fuzz.py: the max of a column vector `v[tile_m][:, None]` down its
# rows (dim 0) was refused with a message that contradicted itself ("reduces over the last
# two axes ... but this max reduces axis 0 of a rank-2 value"). Now refused by name in
# loom/dataflow/layout.py, as docs/helion-surface.md lists it.
"""Fuzzed program fz_ce9ae01328 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=True), LeafSpec(kind='col', dtype='fp16', upcast=True)), scalars=(), family=LoopReduce(axis=0, reduce=Reduce(op='amax', expr=Leaf(index=1), keepdim=False, dtype='bf16', correction=0)), formats='', arch=ArchChoice(base='blackhole_12x10', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_ce9ae01328(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([32], dtype=torch.bfloat16, device=x0.device)
    for tile_n in hl.tile(32):
        acc = hl.full([tile_n], float("-inf"), dtype=torch.float32)
        for tile_m in hl.tile(32):
            acc = torch.maximum(acc, torch.amax(x1[tile_m].float()[:, None], dim=0))
        out0[tile_n] = (acc).to(torch.bfloat16)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    x1 = torch.randn(32, generator=gen).to(torch.float16)
    return (
        x0,
        x1,
    )
