"""Per-row scales and a per-column shift: the 1-D `scale[tile_m].float()[:, None]` and the
2-D column `gain[tile_m, :]` (shape (m, 1)) broadcast across the columns of the tile,
the 1-D `shift[tile_n][None, :]` down its rows."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_scale(
    x: torch.Tensor, scale: torch.Tensor, gain: torch.Tensor, shift: torch.Tensor
) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        scaled = x[tile_m, tile_n] * scale[tile_m].float()[:, None] * gain[tile_m, :]
        out[tile_m, tile_n] = scaled + shift[tile_n][None, :]
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(62)
    x = torch.randn(256, 256, generator=gen).to(torch.bfloat16)
    scale = torch.rand(256, generator=gen).to(torch.bfloat16) + 0.5
    gain = torch.rand(256, 1, generator=gen) + 0.5
    shift = torch.randn(256, generator=gen).to(torch.bfloat16)
    return x, scale, gain, shift


def reference(
    x: torch.Tensor, scale: torch.Tensor, gain: torch.Tensor, shift: torch.Tensor
) -> torch.Tensor:
    return (x.float() * scale.float()[:, None] * gain + shift.float()[None, :]).to(x.dtype)


def main() -> None:
    x, scale, gain, shift = make_inputs()
    out = row_scale(x.cuda(), scale.cuda(), gain.cuda(), shift.cuda())
    torch.testing.assert_close(out, reference(x, scale, gain, shift).cuda())


if __name__ == "__main__":
    main()
