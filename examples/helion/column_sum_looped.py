"""Sum of each column as a looped reduction: an inner `hl.tile` over the rows carries a
1-D accumulator, adding the column sums (dim 0) of each row block."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def column_sum_looped(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([n], dtype=torch.float32, device=x.device)
    for tile_n in hl.tile(n):
        acc = hl.zeros([tile_n], dtype=torch.float32)
        for tile_m in hl.tile(m):
            acc = acc + x[tile_m, tile_n].float().sum(0)
        out[tile_n] = acc
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(67)
    return (torch.randn(1024, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.float().sum(0)


def main() -> None:
    (x,) = make_inputs()
    out = column_sum_looped(x.cuda())
    torch.testing.assert_close(out, reference(x).cuda(), atol=1e-2, rtol=1e-3)


if __name__ == "__main__":
    main()
