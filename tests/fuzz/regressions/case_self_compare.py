# Bug (found by benchmarks/fuzz.py): `torch.where(acc > acc, ...)` was refused as
# `operand None` (Helion 1.5.1 traces the second operand of a value compared with itself as
# None, as it traces `x * x` as mul(x, None)). Fixed in loom/frontend/surface.py: a
# comparison with a None operand compares the value with itself, as `_elementwise` does.
"""Fuzzed program fz_323f7005fd (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(64, 64), leaves=(LeafSpec(kind='acc', dtype='fp32', upcast=False), LeafSpec(kind='tile', dtype='fp32', upcast=False)), scalars=(), family=Matmul(k=32, a_dtype='bf16', b_dtype='bf16', epilogue=Output(expr=Where(cmp='gt', lhs=Leaf(index=0), rhs=Leaf(index=0), then=Leaf(index=1), other=Leaf(index=0)), dtype='fp32')), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_323f7005fd(a: torch.Tensor, b: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([64, 64], dtype=torch.float32, device=a.device)
    for tile_m, tile_n in hl.tile([64, 64]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(32):
            acc = acc + a[tile_m, tile_k] @ b[tile_k, tile_n]
        out0[tile_m, tile_n] = (torch.where((acc) > (acc), x1[tile_m, tile_n], acc)).to(
            torch.float32
        )
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(64, 32, generator=gen).to(torch.bfloat16)
    b = torch.randn(32, 64, generator=gen).to(torch.bfloat16)
    x1 = torch.randn(64, 64, generator=gen).to(torch.float32)
    return (
        a,
        b,
        x1,
    )
