"""Bias add and GELU: a 1-D bias broadcast down the rows of each tile."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F


@helion.kernel(static_shapes=True)
def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].float() + bias[tile_n].float()
        out[tile_m, tile_n] = F.gelu(v).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(30)
    x = torch.randn(256, 512, generator=gen).to(torch.bfloat16)
    return x, torch.randn(512, generator=gen).to(torch.bfloat16)


def reference(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(x.float() + bias.float()).to(x.dtype)


def main() -> None:
    x, bias = (t.cuda() for t in make_inputs())
    torch.testing.assert_close(bias_gelu(x, bias), reference(x, bias))


if __name__ == "__main__":
    main()
