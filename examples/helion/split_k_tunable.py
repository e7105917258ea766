"""Split-K matmul whose K block is computed from a tunable split count
(`next_power_of_2(cdiv(k, splits))`), with a hook the first K split may apply
(`if tile_k.begin == 0:`; the identity by default). Loom takes the K block as a tile its
solver chooses (the split is a mapping decision), and an `if` on tile offsets that leaves
the accumulator as it was adds no op."""

from __future__ import annotations

from collections.abc import Callable

import helion
import helion.language as hl
import torch
from helion.autotuner import PowerOfTwoFragment


@helion.kernel(static_shapes=True)
def split_k_tunable(
    a: torch.Tensor,
    b: torch.Tensor,
    first_split: Callable[[torch.Tensor], torch.Tensor] = lambda acc: acc,
) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=a.device)
    splits = hl.register_tunable("splits", PowerOfTwoFragment(1, 64))
    k_block = helion.next_power_of_2(helion.cdiv(k, splits))
    for tile_m, tile_n, tile_k in hl.tile([m, n, k], block_size=[None, None, k_block]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(tile_k.begin, tile_k.end):
            acc = torch.addmm(acc, a[tile_m, inner_k], b[inner_k, tile_n])
        if tile_k.begin == 0:
            acc = first_split(acc)
        hl.atomic_add(out, [tile_m, tile_n], acc)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(65)
    a = torch.randn(64, 512, generator=gen).to(torch.bfloat16)
    b = torch.randn(512, 64, generator=gen).to(torch.bfloat16)
    return a, b


def reference(a: torch.Tensor, b: torch.Tensor, first_split: object = None) -> torch.Tensor:
    return a.float() @ b.float()


def main() -> None:
    a, b = make_inputs()
    out = split_k_tunable(a.cuda(), b.cuda())
    torch.testing.assert_close(out, reference(a, b).cuda(), atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
    main()
