"""A gate stored and read back in the same loop body (`d[tile] = ...`, then
`x[tile] * d[tile]`), and outputs written through flat views of the tensors the kernel
returns, in another order than it stores them: the read of `d` is the stored value
itself (the loads and stores run on separate threads, so a DRAM round trip would race),
and each returned tensor is compared with the view the loop wrote."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def stored_reload(x: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out = torch.empty_like(x)
    d = torch.empty_like(x)
    out_flat = out.view(-1)
    d_flat = d.view(-1)
    x_flat = x.view(-1)
    g_flat = g.view(-1)
    for tile in hl.tile(x.numel()):
        d_flat[tile] = torch.sigmoid(g_flat[tile].float()).to(d.dtype)
        out_flat[tile] = x_flat[tile] * d_flat[tile]
    return out, d


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(42)
    x, g = (torch.randn(4, 32, 64, generator=gen).to(torch.bfloat16) for _ in range(2))
    return x, g


def reference(x: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    d = torch.sigmoid(g.float()).to(x.dtype)
    return x * d, d


def main() -> None:
    x, g = make_inputs()
    out, d = stored_reload(x.cuda(), g.cuda())
    want_out, want_d = reference(x, g)
    torch.testing.assert_close(out.cpu(), want_out)
    torch.testing.assert_close(d.cpu(), want_d)


if __name__ == "__main__":
    main()
