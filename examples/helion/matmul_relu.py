"""Matmul with a fused epilogue: relu(a @ b + bias) with a 1-D bias over the columns."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def matmul_relu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = torch.relu(acc + bias[tile_n].float()).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    a = torch.randn(256, 128, generator=gen).to(torch.bfloat16)
    b = torch.randn(128, 256, generator=gen).to(torch.bfloat16)
    return a, b, torch.randn(256, generator=gen).to(torch.bfloat16)


def reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(a.float() @ b.float() + bias.float()).to(a.dtype)


def main() -> None:
    a, b, bias = (t.cuda() for t in make_inputs())
    torch.testing.assert_close(matmul_relu(a, b, bias), reference(a, b, bias))


if __name__ == "__main__":
    main()
