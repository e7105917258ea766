"""The up half of a GeGLU MLP in one kernel: gelu(x @ wg) * (x @ wu), two accumulators
fed by the same operand."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

SHAPE_KEYS = ("M", "N", "K")


@helion.kernel(static_shapes=True)
def geglu_mlp(x: torch.Tensor, wg: torch.Tensor, wu: torch.Tensor) -> torch.Tensor:
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


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape["M"], shape["K"], generator=gen).to(torch.bfloat16)
    wg, wu = (torch.randn(shape["K"], shape["N"], generator=gen).to(torch.bfloat16) for _ in "gu")
    return x, wg, wu


def reference(x: torch.Tensor, wg: torch.Tensor, wu: torch.Tensor) -> torch.Tensor:
    v = x.float()
    return (F.gelu(v @ wg.float()) * (v @ wu.float())).to(x.dtype)


def flops(shape: dict[str, int]) -> int:
    return 4 * shape["M"] * shape["N"] * shape["K"]
