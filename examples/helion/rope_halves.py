"""Rotary embeddings as Helion's `rope.py` writes them: the head dim viewed as two halves
(`reshape([.., 2, half]).permute(..)` then `hl.split`), the halves rotated by cos/sin
broadcast across the heads (`cos_first[:, None, :, :]`), and merged back (`hl.join`,
`permute`, `reshape`) into a store of every head (`q_out[tile_b, :, tile_t, :]`).

A tile holds 32x32 blocks of its last two dims, so Loom computes each half from its own
loads (the halves' windows of the head dim), stores each half of the joined value into
its half of the window, and stores the heads in a loop over them (a block holds one
index of each leading dim)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def rope_fwd(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    batch, q_heads, seq_len, head_dim = q.size()
    k_heads = k.size(1)
    half_dim = head_dim // 2
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    for tile_b, tile_t in hl.tile([batch, seq_len]):
        cos_pair = (
            cos[tile_b, tile_t, :]
            .to(torch.float32)
            .reshape([tile_b, tile_t, 2, half_dim])
            .permute(0, 1, 3, 2)
        )
        sin_pair = (
            sin[tile_b, tile_t, :]
            .to(torch.float32)
            .reshape([tile_b, tile_t, 2, half_dim])
            .permute(0, 1, 3, 2)
        )
        cos_first, cos_second = hl.split(cos_pair)
        sin_first, sin_second = hl.split(sin_pair)
        q_pair = (
            q[tile_b, :, tile_t, :]
            .to(torch.float32)
            .reshape([tile_b, q_heads, tile_t, 2, half_dim])
            .permute(0, 1, 2, 4, 3)
        )
        q_first, q_second = hl.split(q_pair)
        q_first_out = q_first * cos_first[:, None, :, :] - q_second * sin_first[:, None, :, :]
        q_second_out = q_second * cos_second[:, None, :, :] + q_first * sin_second[:, None, :, :]
        q_out[tile_b, :, tile_t, :] = (
            hl.join(q_first_out, q_second_out)
            .permute(0, 1, 2, 4, 3)
            .reshape([tile_b, q_heads, tile_t, head_dim])
            .to(q_out.dtype)
        )
        k_pair = (
            k[tile_b, :, tile_t, :]
            .to(torch.float32)
            .reshape([tile_b, k_heads, tile_t, 2, half_dim])
            .permute(0, 1, 2, 4, 3)
        )
        k_first, k_second = hl.split(k_pair)
        k_first_out = k_first * cos_first[:, None, :, :] - k_second * sin_first[:, None, :, :]
        k_second_out = k_second * cos_second[:, None, :, :] + k_first * sin_second[:, None, :, :]
        k_out[tile_b, :, tile_t, :] = (
            hl.join(k_first_out, k_second_out)
            .permute(0, 1, 2, 4, 3)
            .reshape([tile_b, k_heads, tile_t, head_dim])
            .to(k_out.dtype)
        )
    return q_out, k_out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    q = torch.randn(1, 4, 128, 64, generator=gen).to(torch.bfloat16)
    k = torch.randn(1, 2, 128, 64, generator=gen).to(torch.bfloat16)
    angles = torch.randn(1, 128, 64, generator=gen)
    return q, k, torch.cos(angles).to(torch.bfloat16), torch.sin(angles).to(torch.bfloat16)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def reference(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    c, s = cos.float()[:, None], sin.float()[:, None]
    q_out = q.float() * c + _rotate_half(q.float()) * s
    k_out = k.float() * c + _rotate_half(k.float()) * s
    return q_out.to(q.dtype), k_out.to(k.dtype)


def main() -> None:
    q, k, cos, sin = (t.cuda() for t in make_inputs())
    for got, want in zip(rope_fwd(q, k, cos, sin), reference(q, k, cos, sin), strict=True):
        torch.testing.assert_close(got, want)


if __name__ == "__main__":
    main()
