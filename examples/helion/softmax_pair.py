"""Two row softmaxes read together: each temperature-scaled row is read by its softmax
and again by its log-softmax, so their blocks are held across each other's (the wait
scopes of the two cross, as in Helion's JSD kernel)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def softmax_pair(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        a = x[tile_m, :] / 2.0
        b = y[tile_m, :] / 2.0
        p = torch.softmax(a, dim=-1)
        q = torch.softmax(b, dim=-1)
        log_p = torch.log_softmax(a, dim=-1)
        log_q = torch.log_softmax(b, dim=-1)
        out[tile_m] = (p * (log_p - log_q) + q * (log_q - log_p)).sum(dim=-1)
    return out


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(41)
    return (torch.randn(64, 256, generator=gen), torch.randn(64, 256, generator=gen))


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a, b = x / 2.0, y / 2.0
    p, q = torch.softmax(a, dim=-1), torch.softmax(b, dim=-1)
    log_p, log_q = torch.log_softmax(a, dim=-1), torch.log_softmax(b, dim=-1)
    return (p * (log_p - log_q) + q * (log_q - log_p)).sum(dim=-1)


def main() -> None:
    x, y = make_inputs()
    torch.testing.assert_close(softmax_pair(x.cuda(), y.cuda()), reference(x, y).cuda())


if __name__ == "__main__":
    main()
