"""A 3-D tensor tiled on all three dims at once: `for tile in hl.tile(x.size())` names no
dimension, so Loom calls the tiles tile_d0, tile_d1, tile_d2."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def scale_3d(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = (x[tile].float() * y[tile].float() - 1.0).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(4, 64, 128, generator=gen).to(torch.bfloat16)
    y = torch.randn(4, 64, 128, generator=gen).to(torch.bfloat16)
    return x, y


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x.float() * y.float() - 1.0).to(x.dtype)


def main() -> None:
    x, y = (t.cuda() for t in make_inputs())
    torch.testing.assert_close(scale_3d(x, y), reference(x, y))


if __name__ == "__main__":
    main()
