"""Sum of each row over a full-row slice `x[tile_m, :]`, written to a 1-D output."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_sum(x: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].float().sum(-1)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(20)
    return (torch.randn(256, 512, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.float().sum(-1)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(row_sum(x.cuda()), reference(x).cuda(), atol=1e-2, rtol=1e-3)


if __name__ == "__main__":
    main()
