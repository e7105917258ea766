"""GELU (the erf form) of an MLP's hidden activations, [tokens, MLP width]: the kernel of
examples/helion/activations.py (`gelu_erf`) at the judge's shapes."""

from __future__ import annotations

import torch

from loom.kernels.examples import EXAMPLES_DIR
from loom.kernels.registry import load_path

SHAPE_KEYS = ("M", "N")
_EXAMPLE = load_path(EXAMPLES_DIR / "activations.py")
gelu = _EXAMPLE.gelu_erf
reference = _EXAMPLE.reference_gelu_erf


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16),)
