"""A 2-D mask from `tile_m.index[:, None]` (a column of row indices): zero every row
from `keep` on, as a padded batch would (the index column broadcasts across the tile)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_mask(x: torch.Tensor, keep: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        inside = tile_m.index[:, None] < keep
        out[tile_m, tile_n] = torch.where(inside, x[tile_m, tile_n], 0.0)
    return out


def make_inputs() -> tuple[torch.Tensor, int]:
    gen = torch.Generator().manual_seed(63)
    return torch.randn(256, 128, generator=gen).to(torch.bfloat16), 200


def reference(x: torch.Tensor, keep: int) -> torch.Tensor:
    out = x.clone()
    out[keep:, :] = 0
    return out


def main() -> None:
    x, keep = make_inputs()
    torch.testing.assert_close(row_mask(x.cuda(), keep), reference(x, keep).cuda())


if __name__ == "__main__":
    main()
