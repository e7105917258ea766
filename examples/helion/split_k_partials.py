"""Split-K matmul without atomics, as Helion's split_k_barrier example writes it but with
the split first: each block multiplies its K-slice and stores its partial product at
its own `tile_k.id` of a `[splits, m, n]` scratch tensor (a leading dim, one entry per
block); after `hl.barrier()` a second launch sums the partials (`.sum(0)`, a loop over
the leading dim). The number of splits follows the K block size, which Loom fixes
before solving (one tile of K per split) because the scratch tensor's shape needs it."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def split_k_partials(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    block_k = hl.register_block_size(k)
    tmp = torch.zeros([(k + block_k - 1) // block_k, m, n], dtype=torch.float32, device=a.device)
    out = torch.empty([m, n], dtype=torch.float32, device=a.device)
    for tile_m, tile_n, tile_k in hl.tile([m, n, k], block_size=[None, None, block_k]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(tile_k.begin, tile_k.end):
            acc = torch.addmm(acc, a[tile_m, inner_k], b[inner_k, tile_n])
        tmp[tile_k.id, tile_m, tile_n] = acc
    hl.barrier()
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = tmp[:, tile_m, tile_n].sum(0)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(42)
    a = torch.randn(64, 256, generator=gen).to(torch.bfloat16)
    b = torch.randn(256, 64, generator=gen).to(torch.bfloat16)
    return a, b


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.float() @ b.float()


def main() -> None:
    a, b = make_inputs()
    out = split_k_partials(a.cuda(), b.cuda())
    torch.testing.assert_close(out, reference(a, b).cuda(), atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
    main()
