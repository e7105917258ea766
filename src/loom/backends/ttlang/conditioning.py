"""The conditioning allowance of verification: rounding noise is not a wrong answer.

Each output is checked normwise, `max |out - ref| <= tol * max |ref|` with the tolerance
of its format (`runner.TOLERANCE`, `blockfloat.tolerance`). That bound assumes the output
is well conditioned: its rounding error is a small fraction of its own size. An output
that comes out of a cancellation is not (`var(x - (x - 0.5))` is exactly 0, and every fp32
evaluation returns ~1e-15 of noise): the reference itself is then mostly rounding error,
and a correct kernel summing in another order differs from it by 100% of max |ref|.

The fp32 reference's own noise is measured by running the same reference again in fp64:
`noise = max |ref_fp32 - ref_fp64|` (absolute, over the tensor). The kernel's result `out`
and `ref_fp32` are two fp32 evaluations of the same expression in different orders; each
is about `noise` from the exact value, so they can be `2 * noise` apart, and the kernel
sums tile by tile (sequentially over the tiles of a row) where torch sums pairwise, so
its error constant can be up to about twice torch's: `NOISE_MULTIPLE = 4`. The allowance
is the larger of the two bounds, never their sum, so an output whose noise is below its
format's rounding (every well-conditioned one: noise ~1e-7 of max |ref|) is checked
exactly as before, and a narrow output format's own rounding (a bf16 store rounding
`ref_fp32` and `ref_fp64` to neighbouring values) adds nothing.

What it cannot hide: an error larger than 4x the reference's own fp32 noise, on any
output. What it cannot rescue: an output whose fp32 reference happens to be exact
(noise 0) while the kernel's order is not; that stays a (visible) failure. The noise is
only measured where Loom can run the reference at both precisions (Helion's interpret
mode, Loom's Tile IR reference; `loom.kernels.checks.reference_noise`), and only for an
output that fails its format's tolerance.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

NOISE_MULTIPLE = 4.0
"""How many times the fp32 reference's own rounding noise an output may differ by (see
the module docstring: two fp32 evaluations, each ~noise from the exact value, the
kernel's tile-by-tile order up to twice torch's pairwise error)."""


def reference_noise(fp32: torch.Tensor, fp64: torch.Tensor) -> float:
    """The fp32 reference's rounding noise: `max |ref_fp32 - ref_fp64|` in fp64; 0 for an
    empty tensor or one whose noise is not finite (no allowance from overflow or NaN)."""
    if not fp32.numel() or fp32.numel() != fp64.numel():
        return 0.0
    a, b = fp32.double().reshape(-1), fp64.double().reshape(-1)
    spread = float((a - b).abs().max())
    return spread if math.isfinite(spread) else 0.0


def conditioned_tolerance(tol: float, scale: float, noise: float) -> float:
    """The relative tolerance of an output (max |out - ref| / `scale`, `scale` = max |ref|)
    given the reference's rounding `noise` (absolute): the format's `tol`, or
    `NOISE_MULTIPLE` times the noise when that is larger."""
    return max(tol, NOISE_MULTIPLE * noise / scale)
