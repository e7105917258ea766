"""Row normalisation with the row split across blocks, in two phases separated by
`hl.barrier()`: phase 1 exponentiates each (row block, column block) tile into a scratch
tensor; phase 2 reads the whole row of scratch tiles, written by every column block of
phase 1, sums it and divides its own tile by the sum. The cross-block read needs a
grid-wide barrier: Loom runs the phases as two launches."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def global_norm(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    scratch = torch.empty([m, n], dtype=torch.float32, device=x.device)
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile([m, n]):
        scratch[tile_m, tile_n] = torch.exp(x[tile_m, tile_n].float())
    hl.barrier()
    for tile_m, tile_n in hl.tile([m, n]):
        total = scratch[tile_m, :].sum(-1, keepdim=True)
        out[tile_m, tile_n] = (scratch[tile_m, tile_n] / total).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(67)
    return (torch.randn(128, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x.float())
    return (e / e.sum(-1, keepdim=True)).to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    out = global_norm(x.cuda())
    torch.testing.assert_close(out, reference(x).cuda())


if __name__ == "__main__":
    main()
