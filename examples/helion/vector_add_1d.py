"""1-D tensors: `hl.tile(x.size())` over a vector, with a 1-D output."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = x[tile] + y[tile] * 2.0
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(7)
    return torch.randn(8192, generator=gen), torch.randn(8192, generator=gen)


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y * 2.0


def main() -> None:
    x, y = (t.cuda() for t in make_inputs())
    torch.testing.assert_close(vector_add(x, y), reference(x, y))


if __name__ == "__main__":
    main()
