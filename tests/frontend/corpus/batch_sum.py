import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def batch_sum(x: torch.Tensor) -> torch.Tensor:
    _, m, n = x.size()
    out = torch.empty([m, n], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = torch.sum(x[:, tile_m, tile_n].float(), dim=0)
    return out
