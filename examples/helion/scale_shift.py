"""`x * alpha + beta` with float scalar arguments (compiled as constants)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def scale_shift(x: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = (x[tile_m, tile_n].float() * alpha + beta).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, float, float]:
    gen = torch.Generator().manual_seed(1)
    return torch.randn(128, 1024, generator=gen).to(torch.bfloat16), 0.75, -2.5


def reference(x: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    return (x.float() * alpha + beta).to(x.dtype)


def main() -> None:
    x, alpha, beta = make_inputs()
    torch.testing.assert_close(scale_shift(x.cuda(), alpha, beta), reference(x, alpha, beta).cuda())


if __name__ == "__main__":
    main()
