"""Host-side views around the device loop: the input transposed (and made contiguous)
and a flat view taken before the loop, the output reshaped after it. Loom replays the
host statements before the loop to feed the device code, and compares the returned view
element for element."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def host_views(x: torch.Tensor) -> torch.Tensor:
    xt = x.transpose(0, 1).contiguous()
    flat = xt.reshape(-1)
    out = torch.empty_like(flat)
    for tile in hl.tile(flat.size(0)):
        out[tile] = flat[tile] * 3.0 - 1.0
    return out.view(xt.size())


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(46)
    return (torch.randn(64, 128, generator=gen),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.t() * 3.0 - 1.0


def main() -> None:
    (x,) = make_inputs()
    torch.testing.assert_close(host_views(x.cuda()), reference(x).cuda())


if __name__ == "__main__":
    main()
