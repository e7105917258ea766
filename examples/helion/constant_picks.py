"""Constant indices inside a 32x32 tile: the last column of each row subtracted from the
row (`x[tile_m, 63]`, also of a 3-D tensor's slice `x[tile_b.begin, tile_m, 63]`, as
Mamba2's chunk state reads the last element of a chunk), and one row of a matrix
(`x[40, tile_n]`), read as the 32-wide tile that holds the element with the element picked
out as a masked sum along that dim; and a constant into a leading dim (`x[1, tile_m,
tile_n]`, any index), a window one element wide."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def minus_last_column(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m, :] = x[tile_m, :] - x[tile_m, n - 1][:, None]
    return out


@helion.kernel(static_shapes=True)
def minus_chunk_last(x: torch.Tensor) -> torch.Tensor:
    b, m, n = x.size()
    out = torch.empty_like(x)
    for tile_b, tile_m in hl.tile([b, m], block_size=[1, None]):
        last = x[tile_b.begin, tile_m, n - 1]
        out[tile_b.begin, tile_m, :] = x[tile_b.begin, tile_m, :] - last[:, None]
    return out


@helion.kernel(static_shapes=True)
def scaled_row(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(1)], dtype=x.dtype, device=x.device)
    for tile_n in hl.tile(x.size(1)):
        out[tile_n] = x[40, tile_n] * 2.0
    return out


@helion.kernel(static_shapes=True)
def second_slice(x: torch.Tensor) -> torch.Tensor:
    _, m, n = x.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = x[1, tile_m, tile_n] * 2.0
    return out


def make_inputs_minus_last_column() -> tuple[torch.Tensor]:
    return (torch.randn(64, 64, generator=torch.Generator().manual_seed(71)),)


def make_inputs_minus_chunk_last() -> tuple[torch.Tensor]:
    return (torch.randn(2, 64, 64, generator=torch.Generator().manual_seed(72)),)


def make_inputs_scaled_row() -> tuple[torch.Tensor]:
    return (torch.randn(64, 128, generator=torch.Generator().manual_seed(73)),)


def make_inputs_second_slice() -> tuple[torch.Tensor]:
    return (torch.randn(3, 64, 64, generator=torch.Generator().manual_seed(74)),)


def reference_minus_last_column(x: torch.Tensor) -> torch.Tensor:
    return x - x[:, -1:]


def reference_minus_chunk_last(x: torch.Tensor) -> torch.Tensor:
    return x - x[:, :, -1:]


def reference_scaled_row(x: torch.Tensor) -> torch.Tensor:
    return x[40] * 2.0


def reference_second_slice(x: torch.Tensor) -> torch.Tensor:
    return x[1] * 2.0


def main() -> None:
    (x,) = make_inputs_minus_last_column()
    torch.testing.assert_close(minus_last_column(x.cuda()).cpu(), reference_minus_last_column(x))


if __name__ == "__main__":
    main()
