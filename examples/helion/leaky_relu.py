"""Leaky ReLU through `torch.where` on a comparison, with the slope as a float argument."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def leaky_relu(x: torch.Tensor, slope: float) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].float()
        out[tile_m, tile_n] = torch.where(v > 0, v, v * slope).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, float]:
    gen = torch.Generator().manual_seed(5)
    return torch.randn(256, 512, generator=gen).to(torch.bfloat16), 0.1


def reference(x: torch.Tensor, slope: float) -> torch.Tensor:
    return torch.nn.functional.leaky_relu(x.float(), slope).to(x.dtype)


def main() -> None:
    x, slope = make_inputs()
    torch.testing.assert_close(leaky_relu(x.cuda(), slope), reference(x, slope).cuda())


if __name__ == "__main__":
    main()
