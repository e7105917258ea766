"""Host statements after the device loop, as Helion's kl_div and jsd examples write
them: the loop stores one loss per row, and the kernel returns their mean, computed on
the host (`torch.sum(loss) / m`). Loom compiles the loop; the statements after it run in
eager torch on the tensors the loop wrote (as the statements before it run on the
arguments), and the returned values are compared with the reference."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True, ignore_warnings=[helion.exc.TensorOperationInWrapper])
def mean_row_loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m = x.size(0)
    loss = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        d = x[tile_m, :] - y[tile_m, :]
        loss[tile_m] = torch.sum(d * d, dim=-1)
    final_loss = torch.sum(loss) / m
    return final_loss


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(64)
    return torch.randn(64, 256, generator=gen), torch.randn(64, 256, generator=gen)


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((x - y) ** 2).sum(-1).mean()


def main() -> None:
    x, y = make_inputs()
    torch.testing.assert_close(mean_row_loss(x.cuda(), y.cuda()).cpu(), reference(x, y))


if __name__ == "__main__":
    main()
