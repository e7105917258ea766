"""RMSNorm of `x + residual` with a weight; the sum is also stored (the next residual)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("M", "N")


@helion.kernel(static_shapes=True)
def rms_norm_residual(
    x: torch.Tensor, res: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    out = torch.empty_like(x)
    h_out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        h = x[tile_m, :].float() + res[tile_m, :].float()
        inv = torch.rsqrt(torch.mean(h * h, dim=-1) + 1e-5)
        out[tile_m, :] = (h * inv[:, None] * w[:].float()).to(out.dtype)
        h_out[tile_m, :] = h.to(out.dtype)
    return out, h_out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    x, res = (torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16) for _ in "xr")
    return x, res, torch.randn(shape["N"], generator=gen).to(torch.bfloat16)


def reference(
    x: torch.Tensor, res: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.float() + res.float()
    inv = torch.rsqrt(h.pow(2).mean(-1) + 1e-5)
    return (h * inv[:, None] * w.float()).to(x.dtype), h.to(x.dtype)
