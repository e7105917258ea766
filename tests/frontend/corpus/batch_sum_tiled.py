import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def batch_sum_tiled(x: torch.Tensor) -> torch.Tensor:
    _, m, n = x.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=x.device)
    for tile_b, tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = torch.sum(x[tile_b, tile_m, tile_n].float(), dim=0)
    return out
