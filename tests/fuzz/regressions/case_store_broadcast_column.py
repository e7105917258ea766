# Bug (found and shrunk by benchmarks/fuzz.py): a value with an axis of extent 1 stored
# into a wider window (`out1[tile_m, :] = f(v[tile_m][:, None]) - red`) was written as if
# it were the whole window: a wrong answer (rel error 0.99) or a kernel tt-lang-sim
# rejected. Fixed in loom/frontend/helion_import.py: such a store broadcasts the value
# across the window first (`_broadcast_to`).
"""Fuzzed program fz_c13e40952a (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False), LeafSpec(kind='col', dtype='fp32', upcast=True)), scalars=(), family=SliceReduce(axis=-1, reduce=Reduce(op='sum', expr=Leaf(index=0), keepdim=True, dtype='fp32', correction=0), center=Output(expr=Unary(op='exp2', arg=Mask(axis='m', limit=192, arg=Leaf(index=1))), dtype='fp32')), formats='bfp8', arch=ArchChoice(base='blackhole_p150_13x10', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_c13e40952a(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([32, 1], dtype=torch.float32, device=x0.device)
    out1 = torch.empty([32, 32], dtype=torch.float32, device=x0.device)
    for tile_m in hl.tile(32):
        red = torch.sum(x0[tile_m, :], dim=-1, keepdim=True)
        out0[tile_m, :] = (red).to(torch.float32)
        out1[tile_m, :] = (
            torch.exp2(
                torch.clamp(
                    torch.where(tile_m.index[:, None] < 192, x1[tile_m].float()[:, None], 0.0),
                    -6.0,
                    6.0,
                )
            )
            - red
        ).to(torch.float32)
    return out0, out1


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    x1 = torch.randn(32, generator=gen).to(torch.float32)
    return (
        x0,
        x1,
    )
