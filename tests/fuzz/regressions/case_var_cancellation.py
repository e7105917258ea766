# Found by benchmarks/fuzz.py (a checker gap, not a Loom bug): `var(x - (x - 0.5))` is
# exactly 0, and both Helion's fp32 interpret mode and tt-lang-sim return ~1e-15 of
# rounding noise (max abs diff 1.1e-16 on O(1) inputs, 7% of the reference's 1.6e-15),
# flagged `wrong` by the normwise bfp8 tolerance. Verify now allows an output a few times
# the fp32 reference's own noise, measured by running it again in fp64
# (`loom.backends.ttlang.conditioning`).
"""Fuzzed program fz_377d586591 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(0.5, 0.5), family=SliceReduce(axis=-1, reduce=Reduce(op='var', expr=Binary(op='sub', lhs=Leaf(index=0), rhs=Binary(op='sub', lhs=Leaf(index=0), rhs=Scalar(index=0))), keepdim=True, dtype='fp32', correction=0), center=None), formats='bfp8', arch=ArchChoice(base='wormhole_n150', grid_y=6, grid_x=3, l1_kib=256), seed=2)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_377d586591(x0: torch.Tensor, s0: float, s1: float):
    out0 = torch.empty([32, 1], dtype=torch.float32, device=x0.device)
    for tile_m in hl.tile(32):
        red = torch.var(
            (x0[tile_m, :]) - ((x0[tile_m, :]) - s0), dim=-1, correction=0, keepdim=True
        )
        out0[tile_m, :] = (red).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(2)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    return (
        x0,
        0.5,
        0.5,
    )
