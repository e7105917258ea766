"""An embedding lookup: the rows of a table at indices read from a tensor
(`weight[idx[tile_b], tile_e]`), compiled as a one-hot matmul over the table (TT-Lang
cannot read a row at an address it loaded; see loom.frontend.gathers)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def embedding_rows(idx: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    n = idx.size(0)
    _, dim = weight.size()
    out = torch.empty([n, dim], dtype=weight.dtype, device=weight.device)
    for tile_b, tile_e in hl.tile([n, dim]):
        out[tile_b, tile_e] = weight[idx[tile_b], tile_e]
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(83)
    idx = torch.randint(0, 96, (512,), generator=gen, dtype=torch.int32)
    return idx, torch.randn(96, 128, generator=gen).to(torch.bfloat16)


def reference(idx: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.embedding(idx.long(), weight)


def main() -> None:
    idx, weight = make_inputs()
    torch.testing.assert_close(
        embedding_rows(idx.cuda(), weight.cuda()), reference(idx, weight).cuda()
    )


if __name__ == "__main__":
    main()
