"""RMSNorm with a residual add, as a transformer layer runs it: the sum of the input and
the residual is stored (the next residual) and normalised by its RMS, then scaled by a
1-D weight; written over a full-row slice `x[tile_m, :]`, so Loom streams the row in
chunks when it does not fit L1 (the looped realization)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def rms_norm_residual(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    out = torch.empty_like(x)
    res_out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        h = x[tile_m, :].float() + residual[tile_m, :].float()
        res_out[tile_m, :] = h.to(res_out.dtype)
        inv = torch.rsqrt(torch.mean(h * h, dim=-1, keepdim=True) + eps)
        out[tile_m, :] = (h * inv * weight[:].float()).to(out.dtype)
    return out, res_out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    gen = torch.Generator().manual_seed(41)
    x = torch.randn(128, 512, generator=gen).to(torch.bfloat16)
    r = torch.randn(128, 512, generator=gen).to(torch.bfloat16)
    w = torch.randn(512, generator=gen).to(torch.bfloat16)
    return x, r, w, 1e-6


def reference(
    x: torch.Tensor, r: torch.Tensor, w: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.float() + r.float()
    inv = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return (h * inv * w.float()).to(x.dtype), h.to(x.dtype)


def main() -> None:
    x, r, w, eps = make_inputs()
    got = rms_norm_residual(x.cuda(), r.cuda(), w.cuda(), eps)
    for g, want in zip(got, reference(x, r, w, eps), strict=True):
        torch.testing.assert_close(g, want.cuda(), atol=2e-2, rtol=2e-2)


if __name__ == "__main__":
    main()
