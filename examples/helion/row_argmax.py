"""Index of the largest and of the smallest element of each row (`torch.argmax` and
`torch.argmin` over a full-row slice), written to int64 outputs, and the index of the
largest element of each column (over `x[:, tile_n]`, dim 0) in a second kernel."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_argmax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    top = torch.empty([m], dtype=torch.int64, device=x.device)
    bottom = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :]
        top[tile_m] = torch.argmax(row, dim=-1)
        bottom[tile_m] = torch.argmin(row, dim=-1)
    return top, bottom


@helion.kernel(static_shapes=True)
def column_argmax(x: torch.Tensor) -> torch.Tensor:
    _, n = x.size()
    out = torch.empty([n], dtype=torch.int64, device=x.device)
    for tile_n in hl.tile(n):
        out[tile_n] = torch.argmax(x[:, tile_n], dim=0)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(65)
    return (torch.randn(128, 256, generator=gen).to(torch.bfloat16),)


make_inputs_row_argmax = make_inputs
make_inputs_column_argmax = make_inputs


def reference_row_argmax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.argmax(-1), x.argmin(-1)


def reference_column_argmax(x: torch.Tensor) -> torch.Tensor:
    return x.argmax(0)


def main() -> None:
    (x,) = make_inputs()
    top, bottom = row_argmax(x.cuda())
    torch.testing.assert_close(top.cpu(), x.argmax(-1))
    torch.testing.assert_close(bottom.cpu(), x.argmin(-1))
    torch.testing.assert_close(column_argmax(x.cuda()).cpu(), x.argmax(0))


if __name__ == "__main__":
    main()
