"""SwiGLU gate: silu(gate) * up, two inputs of the same shape."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F


@helion.kernel(static_shapes=True)
def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(gate)
    for tile_m, tile_n in hl.tile(gate.size()):
        g = gate[tile_m, tile_n].float()
        out[tile_m, tile_n] = (F.silu(g) * up[tile_m, tile_n].float()).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(40)
    gate = torch.randn(256, 512, generator=gen).to(torch.bfloat16)
    up = torch.randn(256, 512, generator=gen).to(torch.bfloat16)
    return gate, up


def reference(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return (F.silu(gate.float()) * up.float()).to(gate.dtype)


def main() -> None:
    gate, up = (t.cuda() for t in make_inputs())
    torch.testing.assert_close(swiglu(gate, up), reference(gate, up))


if __name__ == "__main__":
    main()
