"""Causal flash attention as TTNN's SDPA computes it: one loop over the key chunks up
to the query chunk's end (`hl.tile(0, tile_m.end)`), the mask on every chunk. TTNN's
baselines (`loom.baselines.ttnn_sdpa`) trace this form: their key chunk may be longer
than their query chunk (a 256-key chunk for 128 queries), which the shipped kernel's
split at the diagonal (`loom.kernels.flash_attention_causal`) cannot express, and
`loom.baselines.sdpa_program.ttnn_softmax` then drops the mask where TTNN adds none.
The mask: a key `d = key - query` positions after its query loses `1e9 * d` from its
score (`relu`, so visible keys lose nothing), which takes its exponential to zero. The
function keeps the shipped kernel's name: the baselines' programs are named as before.
"""

from __future__ import annotations

import math

import helion
import helion.language as hl
import torch

from loom.kernels import flash_attention as dense
from loom.kernels import flash_attention_causal as split

SHAPE_KEYS = dense.SHAPE_KEYS
DEFAULT_SHAPE = dense.DEFAULT_SHAPE


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
        for tile_n in hl.tile(0, tile_m.end):
            k_blk = k[tile_b, tile_n, :]
            qk = torch.bmm(q_blk, k_blk.transpose(1, 2)) * scale
            cols = torch.zeros_like(qk) + tile_n.index.to(torch.float32)
            qk = qk - torch.relu(cols - rows) * 1.0e9  # keys after the query: -1e9 or less
            v_blk = v[tile_b, tile_n, :]
            m_i, l_i, acc = split.online_softmax_step(qk, v_blk, m_i, l_i, acc)
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out


input_shapes = dense.input_shapes
example_inputs = dense.example_inputs
make_inputs = dense.make_inputs
shape_of = dense.shape_of
reference = split.reference
flops = split.flops
