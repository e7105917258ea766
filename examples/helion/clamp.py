"""Clamp to [lo, hi] given as scalar arguments, then a `>=` mask counted as 0/1."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def clamp(x: torch.Tensor, lo: float, hi: float) -> tuple[torch.Tensor, torch.Tensor]:
    clipped = torch.empty_like(x)
    at_top = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = torch.clamp(x[tile_m, tile_n], lo, hi)
        clipped[tile_m, tile_n] = v
        at_top[tile_m, tile_n] = (v >= hi).to(at_top.dtype)
    return clipped, at_top


def make_inputs() -> tuple[torch.Tensor, float, float]:
    gen = torch.Generator().manual_seed(6)
    return torch.randn(128, 256, generator=gen).to(torch.bfloat16), -0.5, 0.75


def reference(x: torch.Tensor, lo: float, hi: float) -> tuple[torch.Tensor, torch.Tensor]:
    v = x.clamp(lo, hi)
    return v, (v >= hi).to(x.dtype)


def main() -> None:
    x, lo, hi = make_inputs()
    for got, want in zip(clamp(x.cuda(), lo, hi), reference(x, lo, hi), strict=True):
        torch.testing.assert_close(got, want.cuda())


if __name__ == "__main__":
    main()
