"""Standardize each column (batch-norm style statistics over dim 0): the mean and the
variance of `x[:, tile_n]` with `keepdim=True`, broadcast back down the rows."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def column_norm(x: torch.Tensor, eps: float) -> torch.Tensor:
    _, n = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        block = x[:, tile_n].float()
        mean = block.mean(dim=0, keepdim=True)
        var = torch.var(block, dim=0, keepdim=True, correction=0)
        out[:, tile_n] = ((block - mean) * torch.rsqrt(var + eps)).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, float]:
    gen = torch.Generator().manual_seed(61)
    x = torch.randn(128, 256, generator=gen) * 3.0 + 1.0
    return x.to(torch.bfloat16), 1e-5


def reference(x: torch.Tensor, eps: float) -> torch.Tensor:
    xf = x.float()
    mean = xf.mean(0, keepdim=True)
    var = xf.var(0, keepdim=True, correction=0)
    return ((xf - mean) * torch.rsqrt(var + eps)).to(x.dtype)


def main() -> None:
    x, eps = make_inputs()
    torch.testing.assert_close(column_norm(x.cuda(), eps), reference(x, eps).cuda())


if __name__ == "__main__":
    main()
