"""Layer normalisation without affine parameters: mean and biased variance of each row
over a full-row slice, eps as a float argument."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def layer_norm(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        mu = torch.mean(row, dim=-1, keepdim=True)
        centered = row - mu
        var = torch.mean(centered * centered, dim=-1, keepdim=True)
        out[tile_m, :] = (centered * torch.rsqrt(var + eps)).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, float]:
    gen = torch.Generator().manual_seed(25)
    return torch.randn(128, 512, generator=gen).to(torch.bfloat16) * 3.0 + 1.0, 1e-5


def reference(x: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), eps=eps).to(x.dtype)


def main() -> None:
    x, eps = make_inputs()
    torch.testing.assert_close(layer_norm(x.cuda(), eps), reference(x, eps).cuda())


if __name__ == "__main__":
    main()
