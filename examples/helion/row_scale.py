"""Per-row scale and per-column shift from two 1-D tensors: `scale[tile_m].float()[:, None]`
is a column broadcast across the columns of the tile, `shift[tile_n][None, :]` a row
broadcast down its rows."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_scale(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        scaled = x[tile_m, tile_n] * scale[tile_m].float()[:, None]
        out[tile_m, tile_n] = scaled + shift[tile_n][None, :]
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(62)
    x = torch.randn(256, 256, generator=gen).to(torch.bfloat16)
    scale = torch.rand(256, generator=gen).to(torch.bfloat16) + 0.5
    shift = torch.randn(256, generator=gen).to(torch.bfloat16)
    return x, scale, shift


def reference(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    return x * scale[:, None] + shift[None, :]


def main() -> None:
    x, scale, shift = make_inputs()
    out = row_scale(x.cuda(), scale.cuda(), shift.cuda())
    torch.testing.assert_close(out, reference(x, scale, shift).cuda())


if __name__ == "__main__":
    main()
