# Bug (found by the default-suite sample): arithmetic on a scalar argument in the device
# code (`x / (abs(s0) + 1.0)`) was refused, `s0 + 1.0` even as "index arithmetic on tile
# offsets". Fixed in loom/frontend/helion_import.py: arithmetic on plain numbers (scalar
# arguments are constants) is folded.
"""Fuzzed program fz_7d2feca584 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(0.5,), family=LoopReduce(axis=-1, reduce=Reduce(op='sum', expr=Binary(op='div', lhs=Leaf(index=0), rhs=Scalar(index=0)), keepdim=False, dtype='fp32', correction=1)), formats='', arch=ArchChoice(base='blackhole_12x10', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_7d2feca584(x0: torch.Tensor, s0: float):
    out0 = torch.empty([32], dtype=torch.float32, device=x0.device)
    for tile_m in hl.tile(32):
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(32):
            acc = acc + torch.sum((x0[tile_m, tile_n]) / (abs(s0) + 1.0), dim=-1)
        out0[tile_m] = (acc).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    return (
        x0,
        0.5,
    )
