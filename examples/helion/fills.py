"""Creation ops inside the loop: hl.full, hl.zeros, torch.full_like, torch.zeros_like and
x.new_empty... combined into `2 * x + 0.5 + 0` (new_empty/empty_like read as zeros in
Loom, so they are only written before being read here)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def fills(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].float()
        two = hl.full([tile_m, tile_n], 2.0, dtype=torch.float32)
        half = torch.full_like(v, 0.5)
        zero = torch.zeros_like(v)
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        acc = acc + two * v + half + zero
        out[tile_m, tile_n] = acc.to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(11)
    return (torch.randn(128, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return (2.0 * x.float() + 0.5).to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(fills(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
