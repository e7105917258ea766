"""`.to(dtype)`: bf16 in, fp32 out, with the square computed in fp32 (`x * x`, the same
tensor twice)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def to_fp32(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.size(), dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].to(torch.float32)
        out[tile_m, tile_n] = v * v
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(10)
    return (torch.randn(256, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.float() * x.float()


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(to_fp32(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
