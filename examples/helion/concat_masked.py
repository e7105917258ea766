"""Masked loads across two tensors: both dims of the output tiled, each column block read
from `x` or from `y` with `hl.load(..., extra_mask=)` and merged with `torch.where`, as
Helion's concatenate example (`concat2d_dim1`) writes it. `y` is read at `tile_n.index -
n1`, a window shifted by a constant; the blocks left of `y` read a clamped window whose
elements the mask zeroes."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def concat_masked(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0), x.size(1) + y.size(1)], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile(out.size()):
        x_part = hl.load(x, [tile_m, tile_n], extra_mask=(tile_n.index < x.size(1))[None, :])
        y_part = hl.load(
            y,
            [tile_m, tile_n.index - x.size(1)],
            extra_mask=(tile_n.index >= x.size(1))[None, :],
        )
        out[tile_m, tile_n] = torch.where((tile_n.index < x.size(1))[None, :], x_part, y_part)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(63)
    return torch.randn(64, 128, generator=gen), torch.randn(64, 96, generator=gen)


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.cat([x, y], dim=1)


def main() -> None:
    x, y = make_inputs()
    torch.testing.assert_close(concat_masked(x.cuda(), y.cuda()).cpu(), reference(x, y))


if __name__ == "__main__":
    main()
