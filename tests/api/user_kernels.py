"""A Helion kernel written as a user would: no Loom file convention (no SHAPE_KEYS,
make_inputs or reference), so `loom.compile` names its shape after the arguments and
verifies it against Helion's eager execution."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=torch.bfloat16, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = acc + torch.matmul(x[tile_m, tile_k], y[tile_k, tile_n]).float()
        out[tile_m, tile_n] = acc.to(torch.bfloat16)
    return out


@helion.kernel(static_shapes=True)
def matmul_addmm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The same product through torch.addmm, which Helion's eager mode cannot run on CPU."""
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=torch.bfloat16, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(torch.bfloat16)
    return out


@helion.kernel(static_shapes=True)
def rms_norm_residual(
    x: torch.Tensor, r: torch.Tensor, w: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """RMS norm of a residual sum with a weight: a scalar argument with a default."""
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        h = x[tile_m, :].float() + r[tile_m, :].float()
        inv = torch.rsqrt(torch.mean(h * h, dim=-1) + eps)
        out[tile_m, :] = (h * inv[:, None] * w[:].float()).to(out.dtype)
    return out
