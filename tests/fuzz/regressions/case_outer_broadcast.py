# Bug (found by benchmarks/fuzz.py): an op between a column and a row (an outer broadcast:
# a `tile_m.index[:, None]` mask on a row `v[tile_n][None, :]`) made a kernel tt-lang-sim
# rejected (broadcast shape mismatch). Fixed in loom/frontend/helion_import.py
# (`_outer_broadcast`): the first operand is broadcast to the result's shape first.
"""Fuzzed program fz_d551274b30 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 128), leaves=(LeafSpec(kind='tile', dtype='fp16', upcast=True), LeafSpec(kind='row', dtype='bf16', upcast=False)), scalars=(), family=LoopReduce(axis=-1, reduce=Reduce(op='mean', expr=Mask(axis='m', limit=161, arg=Leaf(index=1)), keepdim=False, dtype='fp32', correction=1)), formats='bfp4', arch=ArchChoice(base='blackhole_12x10', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_d551274b30(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([32], dtype=torch.float32, device=x0.device)
    for tile_m in hl.tile(32):
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(128):
            acc = acc + torch.sum(
                torch.where(tile_m.index[:, None] < 161, x1[tile_n][None, :], 0.0), dim=-1
            )
        out0[tile_m] = (acc * 0.0078125).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 128, generator=gen).to(torch.float16)
    x1 = torch.randn(128, generator=gen).to(torch.bfloat16)
    return (
        x0,
        x1,
    )
