"""Causal flash attention: query i attends to keys 0..i.

The keys of a query tile run in two loops that carry the online softmax from one to
the other: the diagonal block first (`hl.tile(tile_m.begin, tile_m.end)`), where the
mask is built from the tile indices, then the blocks below it (`hl.tile(0,
tile_m.begin)`), every key visible, no mask. The key tiles past the diagonal are never
visited: a query tile near the start does a fraction of the work of one near the end,
about half the work of the non-causal kernel in total, and only one key block in
every query tile's run pays for the mask (TTNN's SDPA masks only its diagonal chunk).
The online softmax is the same in any key order; the diagonal block goes first so its
row maxima are finite from the start (every query sees itself). The mask: a key `d =
key - query` positions after its query loses `1e9 * d` from its score (`relu`, so
visible keys lose nothing), which takes its exponential to exactly zero (Loom has no
-inf fill: `torch.where` would be a 0/1 blend of four). Shapes and inputs are the
non-causal kernel's.
"""

from __future__ import annotations

import math

import helion
import helion.language as hl
import torch

from loom.kernels import flash_attention as dense

SHAPE_KEYS = dense.SHAPE_KEYS
DEFAULT_SHAPE = dense.DEFAULT_SHAPE


def online_softmax_step(
    qk: torch.Tensor, v_blk: torch.Tensor, m_i: torch.Tensor, l_i: torch.Tensor, acc: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One key block of the online softmax: the running row maxima, sums and output
    after the scores `qk` and values `v_blk` (both key loops run it; Helion inlines it)."""
    m_ij = torch.maximum(m_i, torch.amax(qk, -1))
    p = torch.exp(qk - m_ij.unsqueeze(-1))
    alpha = torch.exp(m_i - m_ij)
    l_i = l_i * alpha + torch.sum(p, -1)
    acc = acc * alpha.unsqueeze(-1)
    acc = torch.baddbmm(acc, p.to(torch.bfloat16), v_blk)
    return m_ij, l_i, acc


@helion.kernel(static_shapes=True)
def flash_attention_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    bh, seq_q, d = q.size()
    head_dim = hl.specialize(d)
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(head_dim)
    for tile_b, tile_m in hl.tile([bh, seq_q]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, head_dim], dtype=torch.float32)
        q_blk = q[tile_b, tile_m, :]
        rows = tile_m.index.to(torch.float32).unsqueeze(1)
        for tile_n in hl.tile(tile_m.begin, tile_m.end):  # the diagonal: masked
            k_blk = k[tile_b, tile_n, :]
            qk = torch.bmm(q_blk, k_blk.transpose(1, 2)) * scale
            cols = torch.zeros_like(qk) + tile_n.index.to(torch.float32)
            qk = qk - torch.relu(cols - rows) * 1.0e9  # keys after the query: -1e9 or less
            v_blk = v[tile_b, tile_n, :]
            m_i, l_i, acc = online_softmax_step(qk, v_blk, m_i, l_i, acc)
        for tile_n in hl.tile(0, tile_m.begin):  # below the diagonal: all visible
            k_blk = k[tile_b, tile_n, :]
            qk = torch.bmm(q_blk, k_blk.transpose(1, 2)) * scale
            v_blk = v[tile_b, tile_n, :]
            m_i, l_i, acc = online_softmax_step(qk, v_blk, m_i, l_i, acc)
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out


input_shapes = dense.input_shapes
example_inputs = dense.example_inputs
make_inputs = dense.make_inputs
shape_of = dense.shape_of


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """torch's causal scaled-dot-product attention, in fp32."""
    out = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=True
    )
    return out.to(torch.bfloat16)


def flops(shape: dict[str, int]) -> int:
    """Half the dense figure: the work above the diagonal is skipped (the convention of
    causal attention benchmarks, TTNN's included)."""
    return dense.flops(shape) // 2
