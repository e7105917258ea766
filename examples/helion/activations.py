"""Activations, one kernel each, in one file: run one with `--kernel NAME`.

sigmoid, tanh, relu, silu and GELU in both forms (erf, and the tanh approximation,
which Loom rewrites into its polynomial through tanh). `reference_<kernel>` gives each
kernel its own reference.
"""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F


@helion.kernel(static_shapes=True)
def sigmoid(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = torch.sigmoid(x[tile_m, tile_n].float()).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def tanh(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = torch.tanh(x[tile_m, tile_n].float()).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def relu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = torch.relu(x[tile_m, tile_n])
    return out


@helion.kernel(static_shapes=True)
def silu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = F.silu(x[tile_m, tile_n].float()).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def gelu_erf(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = F.gelu(x[tile_m, tile_n].float()).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n].float()
        out[tile_m, tile_n] = F.gelu(v, approximate="tanh").to(out.dtype)
    return out


def make_inputs() -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(2)
    return (torch.randn(256, 256, generator=gen).to(torch.bfloat16),)


def reference_sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x.float()).to(x.dtype)


def reference_tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x.float()).to(x.dtype)


def reference_relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


def reference_silu(x: torch.Tensor) -> torch.Tensor:
    return F.silu(x.float()).to(x.dtype)


def reference_gelu_erf(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x.float()).to(x.dtype)


def reference_gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x.float(), approximate="tanh").to(x.dtype)


def main() -> None:
    (x,) = make_inputs()
    for kernel, ref in (
        (sigmoid, reference_sigmoid),
        (tanh, reference_tanh),
        (relu, reference_relu),
        (silu, reference_silu),
        (gelu_erf, reference_gelu_erf),
        (gelu_tanh, reference_gelu_tanh),
    ):
        torch.testing.assert_close(kernel(x.cuda()), ref(x).cuda(), atol=2e-2, rtol=2e-2)


if __name__ == "__main__":
    main()
