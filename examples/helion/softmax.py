"""Row softmax over a full-row slice, the max and the sum kept as columns."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def softmax(x: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        shifted = row - torch.amax(row, dim=1, keepdim=True)
        num = torch.exp(shifted)
        out[tile_m, :] = (num / torch.sum(num, dim=1, keepdim=True)).to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(22)
    return (torch.randn(256, 512, generator=gen).to(torch.bfloat16),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(softmax(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
