import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def int_sum(x: torch.Tensor) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].sum(-1)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    return (torch.arange(64 * 64, dtype=torch.int32).reshape(64, 64),)
