"""Flash decode: one query row per head against a long KV cache, split across cores.

The grid runs over (batch*heads, KV splits of `tile_s` positions); each block streams its
split in tiles of `tile_n` with an online softmax, then the partial (max, sum, output)
triples of all splits are gathered to the block with `tile_s.id == 0` and merged by
log-sum-exp. Inputs are laid out as the device code indexes them: q is [B*H, 1, D],
k and v are [B*H, S, D].
"""

from __future__ import annotations

import math

import helion
import helion.language as hl
import torch

from loom.frontend.language import gather

SHAPE_KEYS = ("B", "H", "S", "D")
DEFAULT_SHAPE = {"B": 1, "H": 8, "S": 8192, "D": 64}


@helion.kernel(static_shapes=True)
def flash_decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    bh, seq_kv, d = k.size()
    head_dim = hl.specialize(d)
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(head_dim)
    block_s = hl.register_block_size(seq_kv)
    for tile_b, tile_s in hl.tile([bh, seq_kv], block_size=[1, block_s]):
        m_i = hl.full([tile_b, 1], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, 1], dtype=torch.float32)
        acc = hl.zeros([tile_b, 1, head_dim], dtype=torch.float32)
        q_blk = q[tile_b, :, :]
        for tile_n in hl.tile(tile_s.begin, tile_s.end):
            k_blk = k[tile_b, tile_n, :]
            qk = torch.bmm(q_blk, k_blk.transpose(1, 2)) * scale
            m_ij = torch.maximum(m_i, torch.amax(qk, -1))
            p = torch.exp(qk - m_ij[:, :, None])
            alpha = torch.exp(m_i - m_ij)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = acc * alpha[:, :, None]
            acc = torch.baddbmm(acc, p.to(torch.bfloat16), v[tile_b, tile_n, :])
            m_i = m_ij
        m_all = gather(tile_s, m_i)
        l_all = gather(tile_s, l_i)
        acc_all = gather(tile_s, acc)
        if tile_s.id == 0:
            m_max = torch.amax(m_all, 0)
            weight = torch.exp(m_all - m_max[None, :, :])
            l_sum = torch.sum(l_all * weight, 0)
            o_sum = torch.sum(acc_all * weight[:, :, :, None], 0)
            out[tile_b, :, :] = (o_sum / l_sum[:, :, None]).to(out.dtype)
    return out


def input_shapes(shape: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
    return ((bh, 1, d), (bh, s, d), (bh, s, d))


def example_inputs(shape: dict[str, int]) -> tuple[torch.Tensor, ...]:
    """Uninitialised tensors of the right shapes: enough for Helion to bind the kernel."""
    return tuple(torch.empty(s, dtype=torch.bfloat16) for s in input_shapes(shape))


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=gen).to(torch.bfloat16) for s in input_shapes(shape))


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = (q.float() @ k.float().transpose(1, 2)) * scale
    return (torch.softmax(scores, dim=-1) @ v.float()).to(torch.bfloat16)


def flops(shape: dict[str, int]) -> int:
    return 4 * shape["B"] * shape["H"] * shape["S"] * shape["D"]


def shape_of(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> dict[str, int]:
    """The named shape of a call; k is [B*H, S, D], so batch and heads come back as
    B=1, H=B*H (the same work, flops and schedule)."""
    return {"B": 1, "H": int(k.shape[0]), "S": int(k.shape[1]), "D": int(k.shape[2])}
