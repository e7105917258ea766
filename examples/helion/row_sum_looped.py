"""A looped reduction: each block accumulates the row sums of its rows over an inner
`hl.tile` on the reduced dim, with the reduction block size registered by
`hl.register_reduction_dim`-free plain tiling (Loom picks the inner block size)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_sum_looped(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n):
            acc = acc + torch.sum(x[tile_m, tile_n].float(), dim=1)
        out[tile_m] = acc
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(27)
    return (torch.randn(128, 2048, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.float().sum(-1)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(row_sum_looped(x.cuda()), reference(x).cuda(), atol=1e-2, rtol=1e-3)


if __name__ == "__main__":
    main()
