"""Block-float quantization emulation (bfp8_b / bfp4_b), checked on hand-computed values."""

from __future__ import annotations

import pytest
import torch

from loom.backends.ttlang.blockfloat import mantissa_bits, quantize, tolerance


def test_bfp8_rounds_to_the_shared_exponent_of_its_16_values() -> None:
    # Group max 1.0 -> shared exponent 2^0, 7 magnitude bits -> unit 2^-6.
    row = torch.tensor([1.0, 0.3, 0.01, -0.77] + [0.0] * 12)
    q = quantize(row, "bfp8")
    assert q.tolist()[:4] == [1.0, 19 / 64, 1 / 64, -49 / 64]


def test_groups_are_runs_of_16_along_the_last_axis() -> None:
    # A large value in the second group does not coarsen the first.
    row = torch.tensor([0.01] + [0.0] * 15 + [100.0] + [0.0] * 15)
    q = quantize(row, "bfp8")
    assert q[0].item() == pytest.approx(0.01, rel=2**-6)
    assert q[16].item() == 100.0


def test_ties_round_to_even_and_large_values_saturate() -> None:
    unit = 2.0**-6  # group max 1.5 -> exponent 2^0
    row = torch.tensor([1.5, 2.5 * unit, 3.5 * unit] + [0.0] * 13)
    assert quantize(row, "bfp8").tolist()[1:3] == [2 * unit, 4 * unit]
    near_two = torch.tensor([1.999] + [0.0] * 15)  # rounds to 128 units: saturates at 127
    assert quantize(near_two, "bfp8")[0].item() == 127 * unit


@pytest.mark.parametrize("fmt", ["bfp8", "bfp4"])
def test_error_bound_idempotence_and_bf16_exactness(fmt: str) -> None:
    x = torch.randn(64, 96, generator=torch.Generator().manual_seed(0))
    q = quantize(x, fmt)
    groups = x.reshape(64, 6, 16).abs().amax(-1, keepdim=True)
    unit = torch.exp2(torch.floor(torch.log2(groups)) - (mantissa_bits(fmt) - 1))
    # half a unit from rounding; the group maximum may lose up to one unit to saturation
    err = (q - x).reshape(64, 6, 16).abs()
    assert bool((err <= unit).all())
    assert float((err <= unit / 2 + 1e-12).float().mean()) > 0.9
    assert torch.equal(quantize(q, fmt), q)
    assert torch.equal(q.to(torch.bfloat16).float(), q)


def test_tolerances_follow_the_mantissa() -> None:
    assert mantissa_bits("bfp8") == 7 and mantissa_bits("bfp4") == 3
    assert tolerance("bfp8") == 2.0**-6 and tolerance("bfp4") == 2.0**-2
