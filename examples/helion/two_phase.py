"""Two phases separated by `hl.barrier()` on the same grid: phase 1 writes a scaled copy
to a scratch tensor, phase 2 reads its own tiles back and adds a bias row. Each block's
phases run in order on one core, so Loom forwards the scratch tiles in L1 instead of a
DRAM round trip (the scratch tensor is not returned)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def two_phase(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    scratch = torch.empty([m, n], dtype=torch.float32, device=x.device)
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile([m, n]):
        scratch[tile_m, tile_n] = torch.exp(x[tile_m, tile_n].float() * 0.5)
    hl.barrier()
    for tile_m, tile_n in hl.tile([m, n]):
        total = scratch[tile_m, tile_n] + bias[tile_n][None, :]
        out[tile_m, tile_n] = total.to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(66)
    x = torch.randn(256, 256, generator=gen).to(torch.bfloat16)
    bias = torch.randn(256, generator=gen)
    return x, bias


def reference(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return (torch.exp(x.float() * 0.5) + bias[None, :]).to(x.dtype)


def main() -> None:
    x, bias = make_inputs()
    out = two_phase(x.cuda(), bias.cuda())
    torch.testing.assert_close(out, reference(x, bias).cuda())


if __name__ == "__main__":
    main()
