"""The conditioning allowance of verification (loom.backends.ttlang.conditioning): an
output that is mostly rounding noise passes within a few times the fp32 reference's own
noise, and a wrong answer still fails, well conditioned or not."""

from __future__ import annotations

import torch

from loom.backends.ttlang.conditioning import NOISE_MULTIPLE, reference_noise
from loom.backends.ttlang.runner import OutputCheck, _check, checked_outputs

GEN = torch.Generator().manual_seed(0)
X = torch.randn(32, 32, generator=GEN)


def _cancelled(x: torch.Tensor) -> torch.Tensor:
    """var(x - (x - 0.5)) per row: exactly 0, ~1e-15 of noise in fp32."""
    return torch.var(x - (x - 0.5), dim=-1, correction=0, keepdim=True)


def _verdict(
    out: torch.Tensor, ref32: torch.Tensor, ref64: torch.Tensor, dtype: str
) -> OutputCheck:
    """The check Loom's verify makes: the format's tolerance, then the reference's noise
    (measured from the fp32 and fp64 runs) for an output that fails it."""
    noise = {"out": reference_noise(ref32, ref64)}
    return checked_outputs([("out", out, ref32, dtype, 0.0)], lambda: noise)[0]


def test_cancellation_noise_passes_within_the_references_own_noise() -> None:
    ref32, ref64 = _cancelled(X), _cancelled(X.double())
    assert float(ref64.abs().max()) == 0.0 and float(ref32.abs().max()) > 0.0
    # another fp32 order (two passes: the mean of 32 halves is exact): var exactly 0
    centred = X - (X - 0.5)
    out = ((centred - centred.sum(-1, keepdim=True) / 32) ** 2).sum(-1, keepdim=True) / 32
    assert not _check("out", out, ref32, "fp32").passed  # the format's tolerance alone
    check = _verdict(out, ref32, ref64, "fp32")
    assert check.passed, check
    assert check.noise == reference_noise(ref32, ref64) > 0.0


def test_the_allowance_is_the_stated_multiple_of_the_noise() -> None:
    ref32, ref64 = _cancelled(X), _cancelled(X.double())
    noise = reference_noise(ref32, ref64)
    inside = ref32 + 0.9 * NOISE_MULTIPLE * noise
    outside = ref32 + 1.1 * NOISE_MULTIPLE * noise
    assert _verdict(inside, ref32, ref64, "fp32").passed
    assert not _verdict(outside, ref32, ref64, "fp32").passed


def test_a_wrong_ill_conditioned_output_far_outside_the_noise_fails() -> None:
    ref32, ref64 = _cancelled(X), _cancelled(X.double())
    dropped = torch.var(X, dim=-1, correction=0, keepdim=True)  # the subtraction lost
    assert not _verdict(dropped, ref32, ref64, "fp32").passed
    assert not _verdict(ref32 + 1e-12, ref32, ref64, "bfp8").passed  # 100x the noise


def test_wrong_well_conditioned_outputs_still_fail() -> None:
    a, b = X, torch.randn(32, 48, generator=GEN)
    ref32, ref64 = a @ b, a.double() @ b.double()
    assert _verdict(ref32.clone(), ref32, ref64, "fp32").passed
    assert not _verdict(ref32 * 1.03, ref32, ref64, "fp32").passed  # 3% off
    assert not _verdict(torch.roll(ref32, 1, dims=0), ref32, ref64, "fp32").passed  # a row off
    var32 = torch.var(X, dim=-1, keepdim=True)
    var64 = torch.var(X.double(), dim=-1, keepdim=True)
    assert not _verdict(var32 * 1.03, var32, var64, "bf16").passed
    # on a well-conditioned output the noise adds nothing: the format's tolerance holds
    check = _verdict(ref32 * 1.03, ref32, ref64, "fp32")
    assert check.tolerance == _check("out", ref32 * 1.03, ref32, "fp32").tolerance


def test_integer_outputs_stay_exact() -> None:
    ref = torch.arange(32, dtype=torch.int32).reshape(32, 1)
    check = _check("out", ref + 1, ref, "int32", noise=1e6)
    assert not check.passed and check.tolerance == 0.0


def test_no_noise_measured_no_allowance() -> None:
    ref32 = _cancelled(X)
    out = torch.zeros_like(ref32)
    check = checked_outputs([("out", out, ref32, "fp32", 0.0)], None)[0]
    assert not check.passed and check.noise == 0.0
    assert reference_noise(torch.full((2,), torch.inf), torch.zeros(2)) == 0.0
