"""exp, log, sqrt, rsqrt, reciprocal, abs and neg on one tile: log(1 + exp(-|x|)) style
stable math, and a normaliser `rsqrt(x^2 + 1)`."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def unary_math(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].float()
        soft = torch.log(torch.exp(-torch.abs(v)) + 1.0)
        norm = torch.rsqrt(v * v + 1.0) + torch.sqrt(torch.abs(v)) * torch.reciprocal(v * v + 2.0)
        out[tile_m, tile_n] = (soft - norm).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    return (torch.randn(128, 512, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    v = x.float()
    soft = torch.log(torch.exp(-v.abs()) + 1.0)
    norm = torch.rsqrt(v * v + 1.0) + v.abs().sqrt() / (v * v + 2.0)
    return (soft - norm).to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(unary_math(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
