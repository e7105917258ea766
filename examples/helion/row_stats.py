"""Row statistics with keepdim both ways, returned as four outputs: the mean kept as a
column (keepdim=True), the max, the min and the unbiased variance as 1-D vectors."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_stats(
    x: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    mean = torch.empty([m, 1], dtype=torch.float32, device=x.device)
    hi = torch.empty([m], dtype=torch.float32, device=x.device)
    lo = torch.empty([m], dtype=torch.float32, device=x.device)
    var = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        mean[tile_m, :] = torch.mean(row, dim=-1, keepdim=True)
        hi[tile_m] = torch.amax(row, dim=-1)
        lo[tile_m] = torch.amin(row, dim=-1)
        var[tile_m] = torch.var(row, dim=-1)
    return mean, hi, lo, var


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(21)
    return (torch.randn(128, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    v = x.float()
    return v.mean(-1, keepdim=True), v.amax(-1), v.amin(-1), v.var(-1)


def main() -> None:
    (x,) = make_inputs()
    for got, want in zip(row_stats(x.cuda()), reference(x), strict=True):
        torch.testing.assert_close(got, want.cuda(), atol=1e-3, rtol=1e-3)


if __name__ == "__main__":
    main()
