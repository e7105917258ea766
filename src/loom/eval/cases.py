"""The paper's evaluation (Section 3) as a list of cases: kernel x shape x architecture.

GEMM at the 18 shapes M, N, K in {256, 2048, 16384} with N <= M; flash attention, causal and
not, at B*L = 16384 (Wormhole) / 15360 (Blackhole) tokens as in the paper (`--fa-scale N`:
1/N of them, see FA_SCALE), 8 heads, D in {64, 128}; flash decode with
H = 32, B in {8, 16, 24} (Wormhole) / {10, 20, 30} (Blackhole), L in {1024, 2048, 4096},
D in {64, 128}; on wormhole_n150 and blackhole_p150_13x10. `quick` is a subset that
runs in minutes on two cores.

The other ops of a transformer layer (`LAYER_KERNELS`: RMSNorm, LayerNorm, softmax, the
residual add, SwiGLU, GELU; Loom's kernels of `benchmarks/families/`) at LLM shapes,
tokens x hidden (`LAYER_SHAPES`), against TTNN's own op (`loom.baselines.ttnn_layer`);
`--quick` with only layer kernels named runs one shape of each (`LAYER_QUICK`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from loom.kernels.examples import EXAMPLES_DIR

WH = "wormhole_n150"
BH = "blackhole_p150_13x10"
ARCHS = (WH, BH)
PAPER_KERNELS = ("gemm", "flash_attention", "flash_attention_causal", "flash_decode")
LAYER_KERNELS = ("rms_norm", "layer_norm", "softmax", "residual_add", "swiglu", "gelu")
KERNELS = PAPER_KERNELS + LAYER_KERNELS
FAMILIES_DIR = EXAMPLES_DIR.parents[1] / "benchmarks" / "families"
"""Where Loom's kernels of the layer ops live (one Helion file each, Loom's SHAPE_KEYS
contract)."""
GEMM_DIMS = (256, 2048, 16384)
PAPER_FA_TOKENS = {WH: 16384, BH: 15360}
FA_SCALE = 1
"""Flash attention runs at the paper's tokens. It is the evaluation's longest part: its
chunk steps grow with the square of the tokens, so every policy simulates 64 times the
work of `--fa-scale 8` (TTNN's default 32 x 32 chunks make H*T*S/1024 chunk steps, 2.1
million for B = 1 on Wormhole: 21.5 million events, about 43 s of CPU for that one
simulation; 340,225 events and 0.59 s at 1/8 of the tokens, benchmarks/sim_speed.py).
Every row is a full simulation, that one included. The simulator stays bit-exact rather
than approximated to go faster, and skipping repeated periods is no way out: the
machine's state never repeats in these runs, the cores drifting apart
(benchmarks/sim_periodicity.py). `--fa-scale 8` runs 1/8 of the tokens for a quicker
look; benchmarks/eval_time.py measures each policy and projects the full list."""
FA_HEADS = 8
FA_BATCHES = {WH: (1, 2), BH: (1, 2)}
FD_BATCHES = {WH: (8, 16, 24), BH: (10, 20, 30)}
FD_LENGTHS = (1024, 2048, 4096)
FD_HEADS = 32
HEAD_DIMS = (64, 128)


@dataclass(frozen=True, order=True)
class EvalCase:
    """One (kernel, architecture, shape); `shape` is sorted (key, value) pairs."""

    kernel: str
    arch: str
    shape: tuple[tuple[str, int], ...]

    @property
    def shape_dict(self) -> dict[str, int]:
        return dict(self.shape)

    @property
    def shape_text(self) -> str:
        return shape_text(self.kernel, self.shape_dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kernel, self.arch, self.shape_text)


SHAPE_ORDER = {
    "gemm": ("M", "N", "K"),
    "flash_attention": ("B", "H", "S", "D"),
    "flash_attention_causal": ("B", "H", "S", "D"),
    "flash_decode": ("B", "H", "S", "D"),
    **{k: ("M", "N") for k in LAYER_KERNELS},
}


def shape_text(kernel: str, shape: dict[str, int]) -> str:
    """`M=256,N=256,K=2048`: the kernel's keys in its own order (others sorted after)."""
    order = SHAPE_ORDER.get(kernel, ())
    keys = [k for k in order if k in shape] + sorted(k for k in shape if k not in order)
    return ",".join(f"{k}={shape[k]}" for k in keys)


def case(kernel: str, arch: str, shape: dict[str, int]) -> EvalCase:
    return EvalCase(kernel, arch, tuple(sorted(shape.items())))


def gemm_cases(arch: str) -> list[EvalCase]:
    return [
        case("gemm", arch, {"M": m, "N": n, "K": k})
        for m, n, k in itertools.product(GEMM_DIMS, GEMM_DIMS, GEMM_DIMS)
        if n <= m
    ]


def attention_cases(
    arch: str, kernel: str = "flash_attention", scale: int = FA_SCALE
) -> list[EvalCase]:
    """The paper's flash attention shapes at 1/`scale` of its tokens (1: the paper's own)."""
    tokens = PAPER_FA_TOKENS[arch] // scale
    return [
        case(kernel, arch, {"B": b, "H": FA_HEADS, "S": tokens // b, "D": d})
        for b, d in itertools.product(FA_BATCHES[arch], HEAD_DIMS)
    ]


def causal_cases(arch: str, scale: int = FA_SCALE) -> list[EvalCase]:
    """The flash attention cases with the causal kernel."""
    return attention_cases(arch, "flash_attention_causal", scale)


def decode_cases(arch: str) -> list[EvalCase]:
    return [
        case("flash_decode", arch, {"B": b, "H": FD_HEADS, "S": s, "D": d})
        for b, s, d in itertools.product(FD_BATCHES[arch], FD_LENGTHS, HEAD_DIMS)
    ]


def kernel_source(kernel: str) -> str:
    """What `loom.kernels.registry.resolve_kernel` takes for an evaluation kernel: a
    shipped kernel's name, or a layer op's file."""
    return str(FAMILIES_DIR / f"{kernel}.py") if kernel in LAYER_KERNELS else kernel


LAYER_SHAPES = {
    **{k: ((1024, 2048), (1024, 4096), (1024, 8192), (8192, 4096)) for k in
       ("rms_norm", "layer_norm", "softmax")},
    **{k: ((1024, 4096), (1024, 8192), (4096, 4096)) for k in ("residual_add", "swiglu", "gelu")},
}  # fmt: skip
"""(tokens, hidden) per layer op: 1024 tokens at the hidden sizes of 2B to 70B models
(2048..8192; the eltwise ops at 4096 and 8192) and one long prefill (8192 tokens for the
row ops, 4096 for the eltwise ops, whose one-tile blocks make a long simulation)."""
LAYER_QUICK = (1024, 2048)


def layer_cases(arch: str, kernel: str, quick: bool = False) -> list[EvalCase]:
    shapes = (LAYER_QUICK,) if quick else LAYER_SHAPES[kernel]
    return [case(kernel, arch, {"M": m, "N": n}) for m, n in shapes]


def paper_cases(
    kernels: tuple[str, ...] = KERNELS, archs: tuple[str, ...] = ARCHS, fa_scale: int = FA_SCALE
) -> list[EvalCase]:
    """Every case of the paper's evaluation, in a stable order (flash attention at
    1/`fa_scale` of the paper's tokens)."""
    makers: dict[str, Callable[[str], list[EvalCase]]] = {
        "gemm": gemm_cases,
        "flash_attention": lambda arch: attention_cases(arch, "flash_attention", fa_scale),
        "flash_attention_causal": lambda arch: causal_cases(arch, fa_scale),
        "flash_decode": decode_cases,
    }
    return [
        c
        for arch in archs
        for k in kernels
        for c in (makers[k](arch) if k in makers else layer_cases(arch, k))
    ]


def expected_seconds(c: EvalCase) -> float:
    """A rough guess of one case's CPU seconds on one core, for the runner to start the
    longest first (so that the workers finish together); it orders, never measures:
    simulated work scales with flash attention's chunk steps (tokens^2 / B), decode's
    B*S, GEMM's M*N*K and a layer op's M*N, with coefficients from
    benchmarks/eval_time.py at 1/8 of the paper's tokens."""
    s = c.shape_dict
    if c.kernel.startswith("flash_attention"):
        steps = (s["B"] * s["S"] / 2048) ** 2 / s["B"]
        return (30.0 if c.kernel.endswith("causal") else 15.0) * steps
    if c.kernel == "flash_decode":
        return 5.0 + 30.0 * s["B"] * s["S"] / (8 * 2048)
    if c.kernel == "gemm":
        return 5.0 + 2.0 * s["M"] * s["N"] * s["K"] / 2048**3
    return 1.0 + 3.0 * s["M"] * s["N"] / (1024 * 4096)


QUICK = (
    ("gemm", {"M": 256, "N": 256, "K": 256}),
    ("gemm", {"M": 2048, "N": 2048, "K": 2048}),
    ("gemm", {"M": 16384, "N": 256, "K": 2048}),
    ("flash_decode", {"B": 8, "H": 32, "S": 1024, "D": 64}),
)


def quick_cases(
    archs: tuple[str, ...] = ARCHS, kernels: tuple[str, ...] = PAPER_KERNELS
) -> list[EvalCase]:
    """A subset touching every policy kind, small enough for a few minutes on two cores;
    the layer ops among `kernels` add one shape each (`LAYER_QUICK`)."""
    out = [c for arch in archs for k in kernels if k in LAYER_KERNELS
           for c in layer_cases(arch, k, quick=True)]  # fmt: skip
    for arch in archs:
        for kernel, shape in QUICK:
            if kernel not in kernels:
                continue
            if kernel == "flash_decode" and arch == BH:
                shape = {**shape, "B": 10}
            out.append(case(kernel, arch, shape))
    return out
