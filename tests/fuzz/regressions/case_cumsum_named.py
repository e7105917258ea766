# Bug: torch.cumsum was refused as `_associative_scan` (Helion's internal op), not by the
# name the docs give. Fixed in loom/frontend/helion_import.py (Helion's internal ops are
# named by the construct a user wrote).
"""Fuzzed program fz_4dbedb5275 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(), family=Refused(construct='cumsum'), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_4dbedb5275(x0: torch.Tensor):
    out0 = torch.empty([32, 32], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 32]):
        out0[tile_m, tile_n] = torch.cumsum(x0[tile_m, tile_n], dim=-1)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(32, 32, generator=gen).to(torch.float32)
    return (x0,)
