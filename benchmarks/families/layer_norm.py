"""LayerNorm with a weight and a bias over the hidden size."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("M", "N")


@helion.kernel(static_shapes=True)
def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        var, mean = torch.var_mean(row, dim=-1, keepdim=True, correction=0)
        normed = (row - mean) * torch.rsqrt(var + 1e-5)
        out[tile_m, :] = (normed * w[:].float() + b[:].float()).to(out.dtype)
    return out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16)
    w, b = (torch.randn(shape["N"], generator=gen).to(torch.bfloat16) for _ in "wb")
    return x, w, b


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    v = x.float()
    out = torch.nn.functional.layer_norm(v, (v.shape[-1],), w.float(), b.float(), 1e-5)
    return out.to(x.dtype)
