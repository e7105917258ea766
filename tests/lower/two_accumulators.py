"""Kernels with two matmul accumulators fed by one K loop, for the placement tests."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F


@helion.kernel(static_shapes=True)
def geglu(x: torch.Tensor, wg: torch.Tensor, wu: torch.Tensor) -> torch.Tensor:
    """Both accumulators are read after the loop: each may be placed separate or l1."""
    m, k = x.size()
    _, n = wg.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        g = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        u = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            g = torch.addmm(g, x[tile_m, tile_k], wg[tile_k, tile_n])
            u = torch.addmm(u, x[tile_m, tile_k], wu[tile_k, tile_n])
        out[tile_m, tile_n] = (F.gelu(g) * u).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def two_products(
    x: torch.Tensor, wg: torch.Tensor, wu: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Both accumulators are only stored: the output policy offers each the output too."""
    m, k = x.size()
    _, n = wg.size()
    g_out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    u_out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        g = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        u = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            g = torch.addmm(g, x[tile_m, tile_k], wg[tile_k, tile_n])
            u = torch.addmm(u, x[tile_m, tile_k], wu[tile_k, tile_n])
        g_out[tile_m, tile_n] = g.to(g_out.dtype)
        u_out[tile_m, tile_n] = u.to(u_out.dtype)
    return g_out, u_out


def inputs(m: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(m, k, generator=gen).to(torch.bfloat16)
    wg, wu = (torch.randn(k, n, generator=gen).to(torch.bfloat16) for _ in "gu")
    return x, wg, wu


def geglu_reference(x: torch.Tensor, wg: torch.Tensor, wu: torch.Tensor) -> torch.Tensor:
    v = x.float()
    return (F.gelu(v @ wg.float()) * (v @ wu.float())).to(x.dtype)
