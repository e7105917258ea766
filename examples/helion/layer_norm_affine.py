"""Layer normalisation with a 1-D weight and bias (broadcast down the rows), computed
over a full-row slice `x[tile_m, :]`."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def layer_norm_affine(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        var, mean = torch.var_mean(row, dim=-1, keepdim=True, correction=0)
        normed = (row - mean) * torch.rsqrt(var + eps)
        out[tile_m, :] = (normed * weight[:].float() + bias[:].float()).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    gen = torch.Generator().manual_seed(31)
    x = torch.randn(128, 256, generator=gen).to(torch.bfloat16)
    w = torch.randn(256, generator=gen).to(torch.bfloat16)
    b = torch.randn(256, generator=gen).to(torch.bfloat16)
    return x, w, b, 1e-5


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    n = x.shape[-1]
    return torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), eps).to(x.dtype)


def main() -> None:
    x, w, b, eps = make_inputs()
    torch.testing.assert_close(
        layer_norm_affine(x.cuda(), w.cuda(), b.cuda(), eps), reference(x, w, b, eps).cuda()
    )


if __name__ == "__main__":
    main()
