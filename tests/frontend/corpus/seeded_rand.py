import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=False)
def seeded_rand(p: float, x: torch.Tensor, seed: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.numel()):
        r = hl.rand([tile], seed=seed)
        out[tile] = torch.where(r > p, x[tile], 0.0)
    return out
