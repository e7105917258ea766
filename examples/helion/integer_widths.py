"""Integer tensors wider or narrower than int32, read as Loom's int32 tiles: an int16
weight widened exactly and made bf16 for the matrix engine (`bf16 @ int16`), and int64
labels (torch's default index type) narrowed to int32 on the host, its range checked,
compared with the column indices to pick each row's label logit."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def int16_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = w.size()
    out = torch.empty([m, n], dtype=torch.bfloat16, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], w[tile_k, tile_n].to(torch.bfloat16), acc=acc)
        out[tile_m, tile_n] = acc.to(torch.bfloat16)
    return out


@helion.kernel(static_shapes=True)
def label_logit(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    n, v = logits.size()
    out = torch.empty([n], dtype=torch.float32, device=logits.device)
    for tile_n in hl.tile(n):
        label = labels[tile_n]
        hit = hl.zeros([tile_n], dtype=torch.float32)
        for tile_v in hl.tile(v):
            sel = tile_v.index[None, :] == label[:, None]
            hit = hit + torch.sum(torch.where(sel, logits[tile_n, tile_v], 0.0), dim=-1)
        out[tile_n] = hit
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(81)
    x = torch.randn(128, 256, generator=gen).to(torch.bfloat16)
    w = torch.randint(-(2**15), 2**15, (256, 128), generator=gen, dtype=torch.int16)
    return x, w


def make_inputs_label_logit() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(82)
    logits = torch.randn(128, 1024, generator=gen)
    return logits, torch.randint(0, 1024, (128,), generator=gen, dtype=torch.int64)


make_inputs_int16_matmul = make_inputs


def reference_int16_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (x.float() @ w.to(torch.bfloat16).float()).to(torch.bfloat16)


def reference_label_logit(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return logits.gather(1, labels[:, None])[:, 0]


def main() -> None:
    x, w = make_inputs()
    got = int16_matmul(x.cuda(), w.cuda())
    torch.testing.assert_close(got, reference_int16_matmul(x, w).cuda(), rtol=2e-2, atol=1.0)
    logits, labels = make_inputs_label_logit()
    got = label_logit(logits.cuda(), labels.cuda())
    torch.testing.assert_close(got, reference_label_logit(logits, labels).cuda())


if __name__ == "__main__":
    main()
