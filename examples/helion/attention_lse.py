"""Attention over a batch of heads that also returns the base-2 log-sum-exp of each query
row, written as Helion's own attention example writes it: `torch.bmm` with an fp32
result dtype on 3-D tiles (the batch a grid axis of tile 1), `exp2`, `log2`, and
`baddbmm` into the running output."""

from __future__ import annotations

import math

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def attention_lse(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    bh, m, d = q.size()
    head_dim = hl.specialize(d)
    out = torch.empty_like(q)
    lse = torch.empty([bh, m, 1], dtype=torch.float32, device=q.device)  # a column per head
    qk_scale = 1.0 / math.sqrt(head_dim) * 1.44269504  # exp2 of scaled scores
    for tile_b, tile_m in hl.tile([bh, m]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = torch.full_like(m_i, 1.0)
        acc = hl.zeros([tile_b, tile_m, head_dim], dtype=torch.float32)
        q_blk = q[tile_b, tile_m, :]
        for tile_n in hl.tile(k.size(1)):
            k_blk = k[tile_b, tile_n, :]
            qk = torch.bmm(q_blk * qk_scale, k_blk.transpose(1, 2), torch.float32)
            m_ij = torch.maximum(m_i, torch.amax(qk, -1))
            p = torch.exp2(qk - m_ij[:, :, None])
            alpha = torch.exp2(m_i - m_ij)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = torch.baddbmm(acc * alpha[:, :, None], p.to(v.dtype), v[tile_b, tile_n, :])
            m_i = m_ij
        lse[tile_b, tile_m, :] = (m_i + torch.log2(l_i))[:, :, None]
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out, lse


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    q, k, v = (torch.randn(2, 128, 64, generator=gen).to(torch.bfloat16) for _ in range(3))
    return q, k, v


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    scores = (q.float() @ k.float().transpose(1, 2)) / math.sqrt(q.shape[-1])
    out = (torch.softmax(scores, dim=-1) @ v.float()).to(q.dtype)
    return out, (torch.logsumexp(scores, dim=-1) / math.log(2.0))[:, :, None]


def main() -> None:
    q, k, v = make_inputs()
    out, lse = attention_lse(q.cuda(), k.cuda(), v.cuda())
    want_out, want_lse = reference(q, k, v)
    torch.testing.assert_close(out.cpu(), want_out, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(lse.cpu(), want_lse)


if __name__ == "__main__":
    main()
