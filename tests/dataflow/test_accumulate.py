"""Which accumulators may change placement (loom.dataflow.accumulate)."""

from __future__ import annotations

from loom.dataflow import build_buffers
from loom.ir.buffers import PLACEMENTS, Accumulator


def test_gemm_accumulator_and_its_placements(tile_programs) -> None:  # type: ignore[no-untyped-def]
    strict = build_buffers(tile_programs["gemm"])
    (acc,) = strict.accumulators
    assert isinstance(acc, Accumulator)
    assert (acc.state, acc.store, acc.scope.key) == ("acc", "out_out", "grid")
    assert acc.placements == ("separate", "l1")  # the kernel's fp32 is kept
    assert acc.knob == "acc_acc"
    (relaxed,) = build_buffers(tile_programs["gemm"], "output").accumulators
    assert relaxed.placements == PLACEMENTS


def test_attention_accumulators_stay_separate(tile_programs) -> None:  # type: ignore[no-untyped-def]
    """acc * alpha + p @ v is no pure matmul accumulation (the state is read by a scale
    before the product is added): no placement choice."""
    for kernel in ("flash_attention", "flash_decode"):
        assert build_buffers(tile_programs[kernel], "output").accumulators == ()
