import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def overwrite(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_n, tile_m] * 2.0
    hl.barrier()
    for tile_m, tile_n in hl.tile(x.size()):
        x[tile_m, tile_n] = out[tile_m, tile_n] + 1.0
    return out
