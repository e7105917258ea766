"""Per-row cross entropy as Helion's example writes it: the label's logit read from a
flattened view (`hl.load(logits.view(-1), [tile_n.index * v + labels])`, int64 labels),
which Loom selects from the rows the kernel loads anyway (`loom.frontend.gathers`), and
`keepdim=True` reductions squeezed back (`m.squeeze(-1)`); the mean loss returned as an
expression (`return losses.mean()`), computed on the host from what the loop wrote."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def cross_entropy_rows(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    n, v = logits.shape
    losses = torch.zeros([n], dtype=logits.dtype, device=logits.device)
    logits_flat = logits.view(-1)
    for tile_n in hl.tile(n):
        flat_indices = tile_n.index * v + labels[tile_n]
        at_target = hl.load(logits_flat, [flat_indices])
        rows = logits[tile_n, :]
        peak = torch.amax(rows, dim=-1, keepdim=True)
        total = torch.sum(torch.exp(rows - peak), dim=-1, keepdim=True)
        losses[tile_n] = peak.squeeze(-1) + torch.log(total.squeeze(-1)) - at_target
    return losses.mean()


def make_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(84)
    logits = torch.randn(128, 512, generator=gen)
    return logits, torch.randint(0, 512, (128,), generator=gen, dtype=torch.int64)


def reference(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(logits, labels)


def main() -> None:
    logits, labels = make_inputs()
    got = cross_entropy_rows(logits.cuda(), labels.cuda())
    torch.testing.assert_close(got, reference(logits, labels).cuda())


if __name__ == "__main__":
    main()
