"""Flash attention (non-causal) with an online softmax.

Inputs are laid out as the device code indexes them: q, k, v are [B*H, S, D]. The grid
runs over (batch*heads, query tiles); the inner loop streams key/value tiles.
"""

from __future__ import annotations

import math

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("B", "H", "S", "D")
DEFAULT_SHAPE = {"B": 1, "H": 8, "S": 2048, "D": 64}


@helion.kernel(static_shapes=True)
def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    bh, seq_q, d = q.size()
    seq_kv = k.size(1)
    head_dim = hl.specialize(d)
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(head_dim)
    for tile_b, tile_m in hl.tile([bh, seq_q]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, head_dim], dtype=torch.float32)
        q_blk = q[tile_b, tile_m, :]
        for tile_n in hl.tile(seq_kv):
            k_blk = k[tile_b, tile_n, :]
            qk = torch.bmm(q_blk, k_blk.transpose(1, 2)) * scale
            m_ij = torch.maximum(m_i, torch.amax(qk, -1))
            p = torch.exp(qk - m_ij[:, :, None])
            alpha = torch.exp(m_i - m_ij)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = acc * alpha[:, :, None]
            acc = torch.baddbmm(acc, p.to(torch.bfloat16), v[tile_b, tile_n, :])
            m_i = m_ij
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out


def input_shapes(shape: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    dims = (shape["B"] * shape["H"], shape["S"], shape["D"])
    return (dims, dims, dims)


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
    return 4 * shape["B"] * shape["H"] * shape["S"] * shape["S"] * shape["D"]


def shape_of(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> dict[str, int]:
    """The named shape of a call; q is [B*H, S, D], so batch and heads come back as
    B=1, H=B*H (the same work, flops and schedule)."""
    return {"B": 1, "H": int(q.shape[0]), "S": int(q.shape[1]), "D": int(q.shape[2])}
