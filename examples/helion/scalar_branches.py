"""Branches on scalar arguments, as Helion's jsd example writes them: `if beta == 0.0:`
inside the loop, and `1 - beta` computed on the host. Loom compiles scalars as
constants, so the comparison is decided at compile time and only the taken branch is
compiled (another value of `beta` is another compile)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def blend(x: torch.Tensor, y: torch.Tensor, beta: float = 0.25) -> torch.Tensor:
    out = torch.empty_like(x)
    one_minus_beta = 1 - beta
    for tile_m, tile_n in hl.tile(x.size()):
        a = x[tile_m, tile_n]
        b = y[tile_m, tile_n]
        if beta == 0.0:
            out[tile_m, tile_n] = a
        elif beta > 1.0:
            out[tile_m, tile_n] = b
        else:
            out[tile_m, tile_n] = beta * b + one_minus_beta * torch.exp(a)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(63)
    return torch.randn(64, 128, generator=gen), torch.randn(64, 128, generator=gen)


def reference(x: torch.Tensor, y: torch.Tensor, beta: float = 0.25) -> torch.Tensor:
    return beta * y + (1 - beta) * torch.exp(x)


def main() -> None:
    x, y = make_inputs()
    torch.testing.assert_close(blend(x.cuda(), y.cuda()).cpu(), reference(x, y))


if __name__ == "__main__":
    main()
