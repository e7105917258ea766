# Bug: --dtype bfp4 crashed the frontend's printer (KeyError 'bfp4': no MLIR element type).
# Fixed in loom/ir/printer.py (bfp4 prints as i4, as bfp8 prints as i8).
"""Fuzzed program fz_a66cfd2fc4 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(), family=Pointwise(rank=2, outputs=(Output(expr=Leaf(index=0), dtype='fp32'),)), formats='bfp4', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_a66cfd2fc4(x0: torch.Tensor):
    out0 = torch.empty([32, 32], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 32]):
        out0[tile_m, tile_n] = (x0[tile_m, tile_n]).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    return (x0,)
