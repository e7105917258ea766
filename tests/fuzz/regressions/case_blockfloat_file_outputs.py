# Bug: a Helion file's block-float outputs were compared unrounded, with the fp32
# tolerance (1e-4), so every `--dtype bfp8` file kernel failed verification; `verify` of
# the shipped kernels rounded both to the format. Fixed in loom/backends/ttlang/runner.py
# (`_check` rounds block-float outputs and takes the format's tolerance).
"""Fuzzed program fz_7a40d0c65b (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 64), leaves=(LeafSpec(kind='tile', dtype='bf16', upcast=False),), scalars=(), family=Pointwise(rank=2, outputs=(Output(expr=Unary(op='exp', arg=Leaf(index=0)), dtype='bf16'),)), formats='bfp8', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_7a40d0c65b(x0: torch.Tensor):
    out0 = torch.empty([32, 64], dtype=torch.bfloat16, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 64]):
        out0[tile_m, tile_n] = (torch.exp(x0[tile_m, tile_n])).to(torch.bfloat16)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 64, generator=gen).to(torch.bfloat16)
    return (x0,)
