"""A weight gradient `x.T @ g`, accumulated over the rows: the left operand is a loaded
tile transposed (`x[tile_m, tile_k].T`), which the compute engine transposes tile by tile
before the matmul."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def weight_grad(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = g.size()
    out = torch.empty([k, n], dtype=torch.float32, device=x.device)
    for tile_k, tile_n in hl.tile([k, n]):
        acc = hl.zeros([tile_k, tile_n], dtype=torch.float32)
        for tile_m in hl.tile(m):
            acc += x[tile_m, tile_k].T @ g[tile_m, tile_n]
        out[tile_k, tile_n] = acc
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(43)
    x = torch.randn(256, 128, generator=gen).to(torch.bfloat16)
    g = torch.randn(256, 192, generator=gen).to(torch.bfloat16)
    return x, g


def reference(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return x.float().T @ g.float()


def main() -> None:
    x, g = make_inputs()
    torch.testing.assert_close(weight_grad(x.cuda(), g.cuda()).cpu(), reference(x, g))


if __name__ == "__main__":
    main()
