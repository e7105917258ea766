import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def jagged_sum(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    (rows,) = offsets.size()
    out = torch.zeros([rows - 1, values.size(1)], dtype=values.dtype, device=values.device)
    for tile_r in hl.tile(rows - 1, block_size=1):
        start = offsets[tile_r.begin]
        end = offsets[tile_r.begin + 1]
        acc = hl.zeros([values.size(1)], dtype=torch.float32)
        for tile_v in hl.tile(start, end):
            acc = acc + values[tile_v, :].float().sum(0)
        out[tile_r.begin, :] = acc.to(out.dtype)
    return out
