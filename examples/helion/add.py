"""Elementwise sum of two matrices, one 2-D tile per block."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(out.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] + y[tile_m, tile_n]
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(256, 512, generator=gen).to(torch.bfloat16)
    y = torch.randn(256, 512, generator=gen).to(torch.bfloat16)
    return x, y


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x.float() + y.float()).to(x.dtype)


def main() -> None:
    x, y = (t.cuda() for t in make_inputs())
    torch.testing.assert_close(add(x, y), reference(x, y))


if __name__ == "__main__":
    main()
