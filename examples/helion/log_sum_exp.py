"""Stable log-sum-exp of each row into a 1-D output."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def log_sum_exp(x: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        top = torch.amax(row, dim=-1)
        out[tile_m] = top + torch.log(torch.sum(torch.exp(row - top[:, None]), dim=-1))
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(26)
    return (torch.randn(256, 256, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(x.float(), dim=-1)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(log_sum_exp(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
