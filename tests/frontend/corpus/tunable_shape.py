import helion
import helion.language as hl
import torch
from helion.autotuner import PowerOfTwoFragment


@helion.kernel(static_shapes=True)
def tunable_scratch(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    splits = hl.register_tunable("splits", PowerOfTwoFragment(1, 8, 2))
    tmp = torch.zeros([splits, m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        tmp[0, tile_m, tile_n] = x[tile_m, tile_n]
    return tmp
