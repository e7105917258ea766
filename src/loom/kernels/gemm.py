"""GEMM: C = A @ B with bf16 inputs and output and an fp32 accumulator."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("M", "N", "K")
DEFAULT_SHAPE = {"M": 4096, "N": 4096, "K": 4096}


@helion.kernel(static_shapes=True)
def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.empty([m, n], dtype=torch.bfloat16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(torch.bfloat16)
    return out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(shape["M"], shape["K"], generator=gen).to(torch.bfloat16)
    b = torch.randn(shape["K"], shape["N"], generator=gen).to(torch.bfloat16)
    return (a, b)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.float() @ b.float()).to(torch.bfloat16)


def flops(shape: dict[str, int]) -> int:
    return 2 * shape["M"] * shape["N"] * shape["K"]
