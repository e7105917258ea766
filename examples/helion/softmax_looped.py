"""Softmax for rows too long for one block: an online max/sum over an inner `hl.tile`
loop on the reduced dim (block size from `hl.register_block_size`), then a second loop
that normalises."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def softmax_looped(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        run_max = hl.full([tile_m], float("-inf"), dtype=torch.float32)
        run_sum = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            blk = x[tile_m, tile_n].float()
            new_max = torch.maximum(run_max, torch.amax(blk, dim=1))
            run_sum = run_sum * torch.exp(run_max - new_max) + torch.sum(
                torch.exp(blk - new_max[:, None]), dim=1
            )
            run_max = new_max
        for tile_n in hl.tile(n, block_size=block_n):
            blk = x[tile_m, tile_n].float()
            out[tile_m, tile_n] = (torch.exp(blk - run_max[:, None]) / run_sum[:, None]).to(
                out.dtype
            )
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(23)
    return (torch.randn(128, 1024, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(softmax_looped(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
