"""A kernel whose two matmul accumulators share one K loop and are only stored (the
judge's `geglu_mlp` family reads both after the loop instead)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def two_products(
    x: torch.Tensor, wg: torch.Tensor, wu: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.size()
    _, n = wg.size()
    g_out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    u_out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        g = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        u = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            a = x[tile_m, tile_k]
            g = torch.addmm(g, a, wg[tile_k, tile_n])
            u = torch.addmm(u, a, wu[tile_k, tile_n])
        g_out[tile_m, tile_n] = g.to(g_out.dtype)
        u_out[tile_m, tile_n] = u.to(u_out.dtype)
    return g_out, u_out
