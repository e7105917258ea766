"""Reductions along an axis other than the last two: the sum and the max over dim 0 of a
[B, M, N] tensor read as a full slice `x[:, tile_m, tile_n]` (Loom loops over the B
slices), the sum over the channel dim 1 of a [B, C, M, N] tensor, and the mean over the
middle dim of a [B, M, N] tensor with `keepdim=True` (a column reduction per batch)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def batch_sum(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    _, m, n = x.size()
    total = torch.empty([m, n], dtype=torch.float32, device=x.device)
    peak = torch.empty([1, m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        block = x[:, tile_m, tile_n]
        total[tile_m, tile_n] = block.float().sum(0)
        peak[:, tile_m, tile_n] = torch.amax(block, dim=0, keepdim=True)
    return total, peak


@helion.kernel(static_shapes=True)
def channel_sum(x: torch.Tensor) -> torch.Tensor:
    b, _, m, n = x.size()
    out = torch.empty([b, m, n], dtype=torch.float32, device=x.device)
    for tile_b, tile_m, tile_n in hl.tile([b, m, n], block_size=[1, None, None]):
        out[tile_b, tile_m, tile_n] = torch.sum(x[tile_b, :, tile_m, tile_n].float(), dim=1)
    return out


@helion.kernel(static_shapes=True)
def middle_mean(x: torch.Tensor) -> torch.Tensor:
    b, _, n = x.size()
    out = torch.empty([b, 1, n], dtype=torch.float32, device=x.device)
    for tile_b, tile_n in hl.tile([b, n], block_size=[1, None]):
        out[tile_b, :, tile_n] = x[tile_b, :, tile_n].float().mean(1, keepdim=True)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(71)
    return (torch.randn(4, 128, 256, generator=gen).to(torch.bfloat16),)


def make_inputs_channel_sum() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(72)
    return (torch.randn(2, 3, 64, 128, generator=gen).to(torch.bfloat16),)


make_inputs_batch_sum = make_inputs
make_inputs_middle_mean = make_inputs


def reference_batch_sum(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.float().sum(0), x.amax(0, keepdim=True)


def reference_channel_sum(x: torch.Tensor) -> torch.Tensor:
    return x.float().sum(1)


def reference_middle_mean(x: torch.Tensor) -> torch.Tensor:
    return x.float().mean(1, keepdim=True)


def main() -> None:
    (x,) = make_inputs()
    total, peak = batch_sum(x.cuda())
    torch.testing.assert_close(total.cpu(), x.float().sum(0))
    torch.testing.assert_close(peak.cpu(), x.amax(0, keepdim=True))
    (y,) = make_inputs_channel_sum()
    torch.testing.assert_close(channel_sum(y.cuda()).cpu(), reference_channel_sum(y))
    torch.testing.assert_close(middle_mean(x.cuda()).cpu(), reference_middle_mean(x))


if __name__ == "__main__":
    main()
