"""RMSNorm with a weight, as a decoder layer runs it: rows of `x` over the hidden size."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("M", "N")


@helion.kernel(static_shapes=True)
def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        inv = torch.rsqrt(torch.mean(row * row, dim=-1) + 1e-5)
        out[tile_m, :] = (row * inv[:, None] * w[:].float()).to(out.dtype)
    return out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16)
    return x, torch.randn(shape["N"], generator=gen).to(torch.bfloat16)


def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    v = x.float()
    inv = torch.rsqrt(v.pow(2).mean(-1) + 1e-5)
    return (v * inv[:, None] * w.float()).to(x.dtype)
