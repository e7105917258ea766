"""GEMM: C = A @ B with bf16 inputs and output and an fp32 accumulator."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("M", "N", "K")
DEFAULT_SHAPE = {"M": 4096, "N": 4096, "K": 4096}


@helion.kernel(static_shapes=True)
def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.empty([m, n], dtype=torch.bfloat16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(torch.bfloat16)
    return out


def input_shapes(shape: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    return ((shape["M"], shape["K"]), (shape["K"], shape["N"]))


def example_inputs(shape: dict[str, int]) -> tuple[torch.Tensor, ...]:
    """Uninitialised tensors of the right shapes: enough for Helion to bind the kernel."""
    return tuple(torch.empty(s, dtype=torch.bfloat16) for s in input_shapes(shape))


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=gen).to(torch.bfloat16) for s in input_shapes(shape))


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.float() @ b.float()).to(torch.bfloat16)


def flops(shape: dict[str, int]) -> int:
    return 2 * shape["M"] * shape["N"] * shape["K"]


def shape_of(a: torch.Tensor, b: torch.Tensor) -> dict[str, int]:
    """The named shape of a call (what `loom.compile(gemm, a, b)` reports)."""
    return {"M": int(a.shape[0]), "N": int(b.shape[1]), "K": int(a.shape[1])}
