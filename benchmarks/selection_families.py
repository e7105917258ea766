"""The judge's kernel families beyond the shipped GEMM, flash attention and flash decode:
the other ops of a decoder layer (norms, softmax, the MLP's activations and the residual
add) and matmuls with an epilogue, at LLM shapes. Each family is one Helion file under
`families/` (Loom's SHAPE_KEYS contract) and a list of shapes judged on both
architectures; `QUICK` has one case per family. Add a shape to a list to judge it: a
shape that does not compile is reported as 'no schedule' with the compiler's reason."""

from __future__ import annotations

from pathlib import Path

from loom.kernels.names import SHIPPED
from loom.kernels.registry import KernelSpec, resolve_kernel

FAMILY_DIR = Path(__file__).resolve().parent / "families"

LLM_SHAPES = ({"M": 8192, "N": 4096}, {"M": 2048, "N": 8192}, {"M": 1024, "N": 16384})
"""Tokens x hidden at which the norms and softmax must compile and reach the DRAM peak
(rows of 8192+ columns stream in chunks: the looped realization)."""

NORM_SHAPES = (
    *({"M": m, "N": n} for m in (1024, 4096) for n in (2048, 4096, 8192)),
    *LLM_SHAPES,
)
"""Tokens x hidden."""

FAMILIES: dict[str, tuple[dict[str, int], ...]] = {
    "rms_norm": NORM_SHAPES,
    "rms_norm_residual": NORM_SHAPES,
    "layer_norm": ({"M": 2048, "N": 2048}, {"M": 2048, "N": 4096}, *LLM_SHAPES),
    "softmax": ({"M": 2048, "N": 2048}, *LLM_SHAPES),
    "swiglu": ({"M": 2048, "N": 11008}, {"M": 512, "N": 14336}, {"M": 1024, "N": 14336}),
    "residual_add": ({"M": 4096, "N": 4096}, {"M": 128, "N": 16384}),
    "matmul_bias_gelu": ({"M": 2048, "N": 11008, "K": 4096}, {"M": 512, "N": 4096, "K": 4096}),
    "geglu_mlp": ({"M": 512, "N": 11008, "K": 4096}, {"M": 128, "N": 14336, "K": 4096}),
}

QUICK: tuple[tuple[str, str, dict[str, int]], ...] = (
    ("rms_norm", "blackhole_p150_13x10", {"M": 1024, "N": 2048}),
    ("rms_norm_residual", "wormhole_n150", {"M": 1024, "N": 2048}),
    ("layer_norm", "wormhole_n150", {"M": 2048, "N": 2048}),
    ("softmax", "blackhole_p150_13x10", {"M": 2048, "N": 2048}),
    ("swiglu", "wormhole_n150", {"M": 512, "N": 14336}),
    ("residual_add", "blackhole_p150_13x10", {"M": 128, "N": 16384}),
    ("matmul_bias_gelu", "wormhole_n150", {"M": 512, "N": 4096, "K": 4096}),
    ("geglu_mlp", "blackhole_p150_13x10", {"M": 128, "N": 14336, "K": 4096}),
)


def family_cases(archs: tuple[str, ...]) -> list[tuple[str, str, dict[str, int]]]:
    """Every family's shapes on every architecture."""
    return [(k, a, s) for k, shapes in FAMILIES.items() for a in archs for s in shapes]


def kernel_spec(kernel: str) -> KernelSpec:
    """A shipped kernel by name, else a family's file."""
    return resolve_kernel(kernel if kernel in SHIPPED else str(FAMILY_DIR / f"{kernel}.py"))
