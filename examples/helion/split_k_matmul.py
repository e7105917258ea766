"""Split-K matmul: the grid also splits K, each block multiplies its K-slice and adds its
partial product into a zero-initialised output with `hl.atomic_add`. Loom compiles the
atomic add as a gather of the partials to the block with `tile_k.id == 0`, which sums
them and stores the tile (no DRAM atomics)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def split_k_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=a.device)
    split = hl.register_block_size(k)
    for tile_m, tile_n, tile_k in hl.tile([m, n, k], block_size=[None, None, split]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(tile_k.begin, tile_k.end):
            acc = torch.addmm(acc, a[tile_m, inner_k], b[inner_k, tile_n])
        hl.atomic_add(out, [tile_m, tile_n], acc)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(64)
    a = torch.randn(64, 1024, generator=gen).to(torch.bfloat16)
    b = torch.randn(1024, 64, generator=gen).to(torch.bfloat16)
    return a, b


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.float() @ b.float()


def main() -> None:
    a, b = make_inputs()
    out = split_k_matmul(a.cuda(), b.cuda())
    torch.testing.assert_close(out, reference(a, b).cuda(), atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
    main()
