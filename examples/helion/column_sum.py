"""Sum and max of each column over a full-column slice `x[:, tile_n]` (a reduction along
dim 0, the non-last axis), written to two 1-D outputs."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def column_sum(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    _, n = x.size()
    total = torch.empty([n], dtype=torch.float32, device=x.device)
    peak = torch.empty([n], dtype=x.dtype, device=x.device)
    for tile_n in hl.tile(n):
        block = x[:, tile_n]
        total[tile_n] = block.float().sum(0)
        peak[tile_n] = torch.amax(block, dim=0)
    return total, peak


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(60)
    return (torch.randn(256, 512, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.float().sum(0), x.amax(0)


def main() -> None:
    (x,) = make_inputs()
    total, peak = column_sum(x.cuda())
    ref_total, ref_peak = reference(x)
    torch.testing.assert_close(total, ref_total.cuda(), atol=1e-2, rtol=1e-3)
    torch.testing.assert_close(peak, ref_peak.cuda())


if __name__ == "__main__":
    main()
