"""A 3-D reduction: the max over the last dim of [B, M, N], grid over (batch, rows), with
the batch tile fixed to 1 (`block_size=[1, None]`) and a full-row slice on N."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def batch_row_max(x: torch.Tensor) -> torch.Tensor:
    b, m, _ = x.size()
    out = torch.empty([b, m, 1], dtype=torch.float32, device=x.device)
    for tile_b, tile_m in hl.tile([b, m], block_size=[1, None]):
        out[tile_b, tile_m, :] = torch.amax(x[tile_b, tile_m, :].float(), dim=-1, keepdim=True)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(42)
    return (torch.randn(4, 64, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.float().amax(-1, keepdim=True)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(batch_row_max(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
