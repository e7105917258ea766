"""A one-hot select over a 3-D tile, as GRPO's backward writes it (Helion's
`grpo_loss.py`): the column index with two leading axes inserted on it,
`tile_v.index[None, None, :]`, compared with a token id, picks `1 - x` at that column
and `-x` elsewhere."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def one_hot_select(logits: torch.Tensor, token: int) -> torch.Tensor:
    b, n, v = logits.shape
    out = torch.empty_like(logits)
    for tile_b, tile_n in hl.tile([b, n]):
        for tile_v in hl.tile(v):
            x = logits[tile_b, tile_n, tile_v]
            sel = tile_v.index[None, None, :] == token
            out[tile_b, tile_n, tile_v] = torch.where(sel, 1.0 - x, -x)
    return out


def make_inputs() -> tuple[torch.Tensor, int]:
    gen = torch.Generator().manual_seed(41)
    return torch.randn(2, 64, 256, generator=gen), 77


def reference(logits: torch.Tensor, token: int) -> torch.Tensor:
    cols = torch.arange(logits.shape[-1])
    sel = cols[None, None, :] == token
    return torch.where(sel, 1.0 - logits, -logits)


def main() -> None:
    logits, token = make_inputs()
    got = one_hot_select(logits.cuda(), token)
    torch.testing.assert_close(got, reference(logits, token).cuda())


if __name__ == "__main__":
    main()
