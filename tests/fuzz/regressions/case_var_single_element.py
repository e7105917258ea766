# Found by benchmarks/fuzz.py (a checker gap, not a Loom bug): var over a batch of 1 with
# correction=1 (torch's answer is NaN) is refused by name ("var over a single element");
# the checker now expects that refusal, and docs/helion-surface.md lists it.
"""Fuzzed program fz_f9c032cb2b (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(1, 64, 96), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(), family=LeadingReduce(reduce=Reduce(op='var', expr=Unary(op='exp', arg=Leaf(index=0)), keepdim=False, dtype='fp32', correction=1)), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=5, grid_x=3, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_f9c032cb2b(x0: torch.Tensor):
    out0 = torch.empty([64, 96], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([64, 96]):
        out0[tile_m, tile_n] = (
            torch.var(torch.exp(x0[:, tile_m, tile_n]), dim=0, correction=1)
        ).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(1, 64, 96, generator=gen).to(torch.float32)
    return (x0,)
