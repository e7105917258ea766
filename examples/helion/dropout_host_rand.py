"""Dropout as Helion's low_mem_dropout writes it (`static_shapes=False`, the tensor
flattened to 1-D by its `numel()`), with the uniform numbers drawn on the host: Loom
compiles per argument shape, so the symbolic extent binds to the arguments' size."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=False)
def dropout_host_rand(p: float, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    scale = 1.0 / (1.0 - p)
    n = x.numel()
    x_flat = x.view(-1)
    r_flat = r.view(-1)
    out_flat = torch.empty_like(x_flat)
    for tidx in hl.tile(n):
        xi = x_flat[tidx].to(torch.float32)
        keep = r_flat[tidx] > p
        out_flat[tidx] = torch.where(keep, xi * scale, 0.0).to(x.dtype)
    return out_flat.view_as(x)


def make_inputs() -> tuple[float, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    return (0.25, torch.randn(4096, generator=gen), torch.rand(4096, generator=gen))


def reference(p: float, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    return torch.where(r > p, x / (1.0 - p), 0.0)


def main() -> None:
    p, x, r = make_inputs()
    torch.testing.assert_close(dropout_host_rand(p, x.cuda(), r.cuda()), reference(p, x, r).cuda())


if __name__ == "__main__":
    main()
