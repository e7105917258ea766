"""Partials with one row per block, as Helion's rms_norm backward writes its weight
gradient: each block sums `x * g` over its rows into its own row of a `[blocks, n]`
tensor (`partial[tile_m.id, :]`), and the host code after the loop reduces the rows
(`partial.sum(0)`). The tensor's shape depends on the block size, so Loom fixes that
block size before solving (one tile of rows) and replays the host code with it; each
block's row is stored as a tile row of its own."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True, ignore_warnings=[helion.exc.TensorOperationInWrapper])
def column_dot(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    m_block = hl.register_block_size(m)
    partial = x.new_empty([(m + m_block - 1) // m_block, n], dtype=torch.float32)
    for tile_m in hl.tile(m, block_size=m_block):
        acc = hl.zeros([n], dtype=torch.float32)
        for rows in hl.tile(tile_m.begin, tile_m.end):
            acc += (x[rows, :].to(torch.float32) * g[rows, :].to(torch.float32)).sum(0)
        partial[tile_m.id, :] = acc
    return partial.sum(0)


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    x = torch.randn(128, 256, generator=gen).to(torch.bfloat16)
    g = torch.randn(128, 256, generator=gen).to(torch.bfloat16)
    return x, g


def reference(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return (x.float() * g.float()).sum(0)


def main() -> None:
    x, g = make_inputs()
    torch.testing.assert_close(column_dot(x.cuda(), g.cuda()).cpu(), reference(x, g))


if __name__ == "__main__":
    main()
