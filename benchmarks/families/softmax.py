"""Row softmax (attention scores' normalisation), [rows, columns]: the kernel and
reference of examples/helion/softmax.py at the judge's shapes."""

from __future__ import annotations

import torch

from loom.kernels.examples import EXAMPLES_DIR
from loom.kernels.registry import load_path

SHAPE_KEYS = ("M", "N")
_EXAMPLE = load_path(EXAMPLES_DIR / "softmax.py")
softmax = _EXAMPLE.softmax
reference = _EXAMPLE.reference


def make_inputs(shape: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(shape["M"], shape["N"], generator=gen).to(torch.bfloat16),)
