"""int32 tensors: integer arithmetic between int32 tiles (exact even beyond 2^24), the
per-row maximum and sum of an integer tensor kept in int32, an integer op with a constant
(computed in fp32, exact below 2^24), and a dequantisation (`q.float() * scale`, the
int32 tile converted to fp32) with a float scalar argument."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def int32_ops(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, _ = a.size()
    mixed = torch.empty_like(a)
    peak = torch.empty([m], dtype=torch.int32, device=a.device)
    total = torch.empty([m], dtype=torch.int32, device=a.device)
    for tile_m in hl.tile(m):
        x = a[tile_m, :]
        mixed[tile_m, :] = torch.maximum(x + x - b[tile_m, :], -x)
        peak[tile_m] = torch.amax(x, dim=-1)
        total[tile_m] = torch.sum(x, dim=-1, dtype=torch.int32)
    return mixed, peak, total


@helion.kernel(static_shapes=True)
def dequantize(q: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    out = torch.empty(q.size(), dtype=torch.float32, device=q.device)
    offset = torch.empty_like(q)
    for tile_m, tile_n in hl.tile(q.size()):
        v = q[tile_m, tile_n]
        out[tile_m, tile_n] = v.float() * scale
        offset[tile_m, tile_n] = v * 3 + 7
    return out, offset


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(74)
    a = torch.randint(-(2**26), 2**26, (128, 256), generator=gen, dtype=torch.int32)
    b = torch.randint(-(2**26), 2**26, (128, 256), generator=gen, dtype=torch.int32)
    return a, b


def make_inputs_dequantize() -> tuple[torch.Tensor, float]:
    gen = torch.Generator().manual_seed(75)
    return torch.randint(-128, 128, (256, 512), generator=gen, dtype=torch.int32), 0.0125


make_inputs_int32_ops = make_inputs


def reference_int32_ops(
    a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.maximum(a + a - b, -a), a.amax(-1), a.sum(-1, dtype=torch.int32)


def reference_dequantize(q: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    return q.float() * scale, q * 3 + 7


def main() -> None:
    a, b = make_inputs()
    for got, want in zip(int32_ops(a.cuda(), b.cuda()), reference_int32_ops(a, b), strict=True):
        torch.testing.assert_close(got.cpu(), want)
    q, scale = make_inputs_dequantize()
    for got, want in zip(dequantize(q.cuda(), scale), reference_dequantize(q, scale), strict=True):
        torch.testing.assert_close(got.cpu(), want)


if __name__ == "__main__":
    main()
