"""Powers by constants: x ** 3, x ** 0.5 of |x|, x ** -1 of (x^2 + 1), and `x * x`."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def power(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].float()
        sq = v * v
        out[tile_m, tile_n] = (v**3 + torch.abs(v) ** 0.5 + (sq + 1.0) ** -1).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(4)
    return (torch.randn(256, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    v = x.float()
    return (v**3 + v.abs().sqrt() + 1.0 / (v * v + 1.0)).to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(power(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
