"""Argmax and argmin over a looped dim: the row is visited tile by tile (an inner
`hl.tile` over n) and a running (value, index) pair is carried across the tiles; a
tile's own argmax plus `tile_n.begin` is its index in the row. A tile replaces the
index only when strictly better (`torch.where` on `>`; the value itself is carried by
`torch.maximum`), so the first index wins ties, as in torch. A second kernel does the
same down the columns (a loop over row tiles, argmax along dim 0)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def argmax_looped(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    top = torch.empty([m], dtype=torch.int64, device=x.device)
    bottom = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        hi = hl.full([tile_m], float("-inf"), dtype=torch.float32)
        lo = hl.full([tile_m], float("inf"), dtype=torch.float32)
        hi_at = hl.zeros([tile_m], dtype=torch.int64)
        lo_at = hl.zeros([tile_m], dtype=torch.int64)
        for tile_n in hl.tile(n):
            block = x[tile_m, tile_n].float()
            peak = torch.amax(block, dim=-1)
            hi_at = torch.where(peak > hi, torch.argmax(block, dim=-1) + tile_n.begin, hi_at)
            hi = torch.maximum(hi, peak)
            floor = torch.amin(block, dim=-1)
            lo_at = torch.where(floor < lo, torch.argmin(block, dim=-1) + tile_n.begin, lo_at)
            lo = torch.minimum(lo, floor)
        top[tile_m] = hi_at
        bottom[tile_m] = lo_at
    return top, bottom


@helion.kernel(static_shapes=True)
def column_argmax_looped(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([n], dtype=torch.int64, device=x.device)
    for tile_n in hl.tile(n):
        best = hl.full([tile_n], float("-inf"), dtype=torch.float32)
        best_at = hl.zeros([tile_n], dtype=torch.int64)
        for tile_m in hl.tile(m):
            block = x[tile_m, tile_n].float()
            peak = torch.amax(block, dim=0)
            best_at = torch.where(peak > best, torch.argmax(block, dim=0) + tile_m.begin, best_at)
            best = torch.maximum(best, peak)
        out[tile_n] = best_at
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(73)
    x = torch.randn(128, 512, generator=gen).to(torch.bfloat16)
    x[5, 40] = x[5, 300] = 9.0  # a tie across two tiles of a row: the first index wins
    x[10, 7] = x[100, 7] = 9.0  # a tie across two tiles of a column
    return (x,)


make_inputs_argmax_looped = make_inputs
make_inputs_column_argmax_looped = make_inputs


def reference_argmax_looped(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.argmax(-1), x.argmin(-1)


def reference_column_argmax_looped(x: torch.Tensor) -> torch.Tensor:
    return x.argmax(0)


def main() -> None:
    (x,) = make_inputs()
    top, bottom = argmax_looped(x.cuda())
    torch.testing.assert_close(top.cpu(), x.argmax(-1))
    torch.testing.assert_close(bottom.cpu(), x.argmin(-1))
    torch.testing.assert_close(column_argmax_looped(x.cuda()).cpu(), x.argmax(0))


if __name__ == "__main__":
    main()
