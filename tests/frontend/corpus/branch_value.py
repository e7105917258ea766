import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def first_split_bias(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=a.device)
    split = hl.register_block_size(k)
    for tile_m, tile_n, tile_k in hl.tile([m, n, k], block_size=[None, None, split]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(tile_k.begin, tile_k.end):
            acc = torch.addmm(acc, a[tile_m, inner_k], b[inner_k, tile_n])
        if tile_k.begin == 0:
            acc = acc + 1.0
        hl.atomic_add(out, [tile_m, tile_n], acc)
    return out
