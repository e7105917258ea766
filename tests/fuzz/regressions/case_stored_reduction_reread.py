# Bug (found by benchmarks/fuzz.py as fz_30dca25a3a, fz_0af74bf931): a row reduction of
# a `tile_m.index` mask with a centred second output (`red` stored, then `x - red`):
# ScheduleError "invalid compute stream: buffer 'lt_lt_1' is waited while a block is
# held". The stored `red` lives in its store buffer, which compute cannot read back, so
# the lowering rebuilds it inline inside the second output from the first mask's block;
# the lifetimes ended that block at the reduction, and the two masks shared one buffer.
# Fixed in loom/dataflow/reify.py (`_read_sites`): a consumer whose result only a store
# buffer holds reads its operands wherever that result is read.
"""Fuzzed program fz_7828164cc7 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(64, 64), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False),), scalars=(), family=SliceReduce(axis=-1, reduce=Reduce(op='sum', expr=Mask(axis='m', limit=16, arg=Leaf(index=0)), keepdim=False, dtype='fp32', correction=1), center=Output(expr=Mask(axis='m', limit=16, arg=Leaf(index=0)), dtype='fp32')), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_7828164cc7(x0: torch.Tensor):
    out0 = torch.empty([64], dtype=torch.float32, device=x0.device)
    out1 = torch.empty([64, 64], dtype=torch.float32, device=x0.device)
    for tile_m in hl.tile(64):
        red = torch.sum(torch.where(tile_m.index[:, None] < 16, x0[tile_m, :], 0.0), dim=-1)
        out0[tile_m] = (red).to(torch.float32)
        out1[tile_m, :] = (
            torch.where(tile_m.index[:, None] < 16, x0[tile_m, :], 0.0) - red[:, None]
        ).to(torch.float32)
    return out0, out1


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(64, 64, generator=gen).to(torch.float32)
    return (x0,)
