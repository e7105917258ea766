"""Row L2 norms in two phases over different grids, separated by `hl.barrier()`: phase 1
squares x tile by tile on a 2-D grid of (row block, column block) into a scratch tensor;
phase 2 runs on a 1-D grid of row blocks and reduces each whole row of scratch, written
by every column block of phase 1. Loom runs the phases as two launches with a grid-wide
barrier between them, each launch with its own tile sizes and mapping."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_norm_two_grids(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    squares = torch.empty([m, n], dtype=torch.float32, device=x.device)
    norms = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        v = x[tile_m, tile_n].float()
        squares[tile_m, tile_n] = v * v
    hl.barrier()
    for tile_r in hl.tile(m):
        norms[tile_r] = torch.sqrt(squares[tile_r, :].sum(-1))
    return norms


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(68)
    return (torch.randn(128, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(x.float(), dim=-1)


def main() -> None:
    (x,) = make_inputs()
    out = row_norm_two_grids(x.cuda())
    torch.testing.assert_close(out, reference(x).cuda())


if __name__ == "__main__":
    main()
