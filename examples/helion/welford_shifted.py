"""Layer norm by Welford's running (count, mean, M2) over column blocks, each block's
count the number of valid columns (`(tile_n.index < n).to(torch.int32).sum()`, the sum
of every element of a vector), the data shifted by each row's first element
(`x[tile_m, 0]`, a constant index) and the scale read from row 0 of a (2, n) parameter
tensor (`p[0, tile_n]`), the bias as a row read with a new axis (`b[None, tile_n]`)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def welford_shifted(
    x: torch.Tensor, p: torch.Tensor, b: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        shift = x[tile_m, 0].to(torch.float32)
        count = torch.zeros_like(shift)
        mean = torch.zeros_like(shift)
        m2 = torch.zeros_like(shift)
        for tile_n in hl.tile(n):
            chunk = x[tile_m, tile_n].to(torch.float32) - shift[:, None]
            cols = (tile_n.index < n).to(torch.int32).sum()
            block_mean = chunk.sum(-1) / cols
            centered = chunk - block_mean[:, None]
            block_m2 = (centered * centered).sum(-1)
            delta = block_mean - mean
            total = count + cols
            mean = mean + delta * (cols / total)
            m2 = m2 + block_m2 + delta * delta * (count * cols / total)
            count = total
        rstd = torch.rsqrt(m2 / count + eps)
        for tile_n in hl.tile(n):
            y = x[tile_m, tile_n].to(torch.float32) - shift[:, None] - mean[:, None]
            y = y * rstd[:, None] * p[0, tile_n][None, :] + b[None, tile_n]
            out[tile_m, tile_n] = y.to(x.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(66)
    x = 3.0 + torch.randn(64, 256, generator=gen)
    p = torch.randn(2, 256, generator=gen)
    b = torch.randn(256, generator=gen)
    return x, p, b


def reference(x: torch.Tensor, p: torch.Tensor, b: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    y = torch.nn.functional.layer_norm(x.float(), [x.shape[-1]], eps=eps)
    return (y * p[0] + b).to(x.dtype)


def main() -> None:
    x, p, b = make_inputs()
    out = welford_shifted(x.cuda(), p.cuda(), b.cuda())
    torch.testing.assert_close(out, reference(x, p, b).cuda(), atol=1e-3, rtol=1e-3)


if __name__ == "__main__":
    main()
