"""A mask from `tile.index`: zero the elements at or past `limit` of a 1-D vector."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def masked_tail(x: torch.Tensor, limit: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        keep = tile.index < limit
        out[tile] = torch.where(keep, x[tile], 0.0)
    return out


def make_inputs() -> tuple[torch.Tensor, int]:
    gen = torch.Generator().manual_seed(44)
    return torch.randn(4096, generator=gen), 3000


def reference(x: torch.Tensor, limit: int) -> torch.Tensor:
    out = x.clone()
    out[limit:] = 0.0
    return out


def main() -> None:
    x, limit = make_inputs()
    torch.testing.assert_close(masked_tail(x.cuda(), limit), reference(x, limit).cuda())


if __name__ == "__main__":
    main()
