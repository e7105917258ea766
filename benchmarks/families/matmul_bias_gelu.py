"""A projection with its epilogue: gelu(a @ b + bias), [tokens, K] @ [K, N]."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

SHAPE_KEYS = ("M", "N", "K")


@helion.kernel(static_shapes=True)
def matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = F.gelu(acc + bias[tile_n].float()).to(out.dtype)
    return out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(shape["M"], shape["K"], generator=gen).to(torch.bfloat16)
    b = torch.randn(shape["K"], shape["N"], generator=gen).to(torch.bfloat16)
    return a, b, torch.randn(shape["N"], generator=gen).to(torch.bfloat16)


def reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(a.float() @ b.float() + bias.float()).to(a.dtype)


def flops(shape: dict[str, int]) -> int:
    return 2 * shape["M"] * shape["N"] * shape["K"]
