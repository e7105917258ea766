"""Static partial slices: two tensors concatenated along the columns, each stored into
its own constant slice of the output (`out[tile_m, :n1]`, `out[tile_m, n1:]`), as
Helion's concatenate example writes it; and a slice read back (`x[tile_m, 64:]`). A
slice is a window of constant offset and extent (whole 32x32 tiles), and a loaded tile
stored as it is is copied by the compute engine from the load buffer into the store
buffer."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def concat_columns(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0), x.size(1) + y.size(1)], dtype=x.dtype, device=x.device)
    n1 = x.size(1)
    for tile_m in hl.tile(x.size(0)):
        out[tile_m, :n1] = x[tile_m, :]
        out[tile_m, n1:] = y[tile_m, :] * 2.0
    return out


@helion.kernel(static_shapes=True)
def tail_columns(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0), x.size(1) - 64], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(x.size(0)):
        out[tile_m, :] = x[tile_m, 64:] + 1.0
    return out


def _inputs(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(128, 128, generator=gen), torch.randn(128, 96, generator=gen)


def make_inputs_concat_columns() -> tuple[torch.Tensor, torch.Tensor]:
    return _inputs(61)


def make_inputs_tail_columns() -> tuple[torch.Tensor]:
    return (_inputs(62)[0],)


def reference_concat_columns(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.cat([x, y * 2.0], dim=1)


def reference_tail_columns(x: torch.Tensor) -> torch.Tensor:
    return x[:, 64:] + 1.0


def main() -> None:
    x, y = make_inputs_concat_columns()
    torch.testing.assert_close(concat_columns(x.cuda(), y.cuda()).cpu(), torch.cat([x, 2 * y], 1))


if __name__ == "__main__":
    main()
