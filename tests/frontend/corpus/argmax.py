import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def row_argmax(x: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = torch.argmax(x[tile_m, :], dim=-1)
    return out
