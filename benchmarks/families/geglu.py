"""GeGLU activation of an MLP: gelu(gate) * up, [tokens, MLP width]."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

SHAPE_KEYS = ("M", "N")


@helion.kernel(static_shapes=True)
def geglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(gate)
    for tile_m, tile_n in hl.tile(gate.size()):
        g = gate[tile_m, tile_n].float()
        out[tile_m, tile_n] = (F.gelu(g) * up[tile_m, tile_n].float()).to(out.dtype)
    return out


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16) for _ in "gu"
    )


def reference(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return (F.gelu(gate.float()) * up.float()).to(gate.dtype)
