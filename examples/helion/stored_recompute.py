"""A tile stored by one inner loop and read back by the next, as Helion's
`squeeze_and_excitation_net` writes it: `h = relu(x @ a)` is stored tile by tile over k,
then `out = x * sigmoid(h @ b)` reads `h[tile_m, tile_k]` again. Reading it from DRAM
would race its store, so Loom recomputes the tile from its producers in the reading loop."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def stored_recompute(
    x: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    k = a.size(1)
    out = torch.empty_like(x)
    h = torch.empty([m, k], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        for tile_k in hl.tile(k):
            h[tile_m, tile_k] = torch.relu(x[tile_m, :] @ a[:, tile_k])
        for tile_n in hl.tile(n):
            acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
            for tile_k in hl.tile(k):
                acc = torch.addmm(acc, h[tile_m, tile_k], b[tile_k, tile_n])
            out[tile_m, tile_n] = x[tile_m, tile_n] * torch.sigmoid(acc)
    return out, h


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    x = torch.randn(128, 64, generator=gen) / 4
    a = torch.randn(64, 96, generator=gen) / 4
    b = torch.randn(96, 64, generator=gen) / 4
    return x, a, b


def reference(
    x: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    h = torch.relu(x @ a)
    return x * torch.sigmoid(h @ b), h


def main() -> None:
    x, a, b = make_inputs()
    got = stored_recompute(x.cuda(), a.cuda(), b.cuda())
    want = reference(x, a, b)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w.cuda())


if __name__ == "__main__":
    main()
