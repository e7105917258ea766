import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def int_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, _ = a.size()
    _, n = b.size()
    out = torch.empty([m, n], dtype=torch.int32, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = a[tile_m, :] @ b[:, tile_n]
    return out
