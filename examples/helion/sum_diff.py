"""Several outputs returned as a tuple: sum and difference of two matrices."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def sum_diff(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    total = torch.empty_like(x)
    diff = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        a = x[tile_m, tile_n]
        b = y[tile_m, tile_n]
        total[tile_m, tile_n] = a + b
        diff[tile_m, tile_n] = a - b
    return total, diff


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(128, 512, generator=gen).to(torch.bfloat16)
    y = torch.randn(128, 512, generator=gen).to(torch.bfloat16)
    return x, y


def reference(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x + y, x - y


def main() -> None:
    x, y = (t.cuda() for t in make_inputs())
    for got, want in zip(sum_diff(x, y), reference(x, y), strict=True):
        torch.testing.assert_close(got, want)


if __name__ == "__main__":
    main()
