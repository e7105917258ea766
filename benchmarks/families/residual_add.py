"""The residual add of a decoder layer: x + h, [tokens, hidden]."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("M", "N")


@helion.kernel(static_shapes=True)
def residual_add(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = (x[tile_m, tile_n].float() + h[tile_m, tile_n].float()).to(out.dtype)
    return out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16) for _ in "xh"
    )


def reference(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    return (x.float() + h.float()).to(x.dtype)
