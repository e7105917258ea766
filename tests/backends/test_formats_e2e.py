"""Data formats and math fidelities end to end: every dtype x fidelity combination of the
published TTNN matmul tables is applied to the GEMM, lowered, emitted and verified on
tt-lang-sim (block-float formats emulated on the host), then simulated; flash decode runs
with a bfloat8_b KV cache."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest
from cases import FAST, Case

from loom.arch import load_arch
from loom.backends.ttlang import emit, verify
from loom.backends.ttlang.blockfloat import quantize_inputs, tolerance
from loom.dataflow import build_buffers
from loom.frontend.formats import apply_formats, parse_format_spec
from loom.ir.program import Program
from loom.lower import lower
from loom.sim import simulate

TABLE_COMBOS = (
    ("bf16", "HiFi4"),
    ("bf16", "HiFi2"),
    ("bfp8", "HiFi2"),
    ("bfp8", "LoFi"),
    ("bfp4", "LoFi"),
)
"""The dtype x fidelity groups of calibration/ttnn_matmul*.csv (manual and OOB)."""

GEMM = next(c for c in FAST if c.id == "gemm512-wh-mcast-ab-2buf")
DECODE = next(c for c in FAST if c.id == "fd-bh-split8-waves-mcast-q")


def _lowered(case: Case, formats: str, fidelity: str) -> Program:
    tile = apply_formats(case.program(), parse_format_spec(formats))
    schedule = dataclasses.replace(
        case.schedule(), math_fidelity=fidelity, dtype=tile.args[0].dtype, formats=formats
    )
    return lower(tile, build_buffers(tile), schedule, load_arch(case.arch))


def _verify(case: Case, program: Program, tmp_path: Path):  # type: ignore[no-untyped-def]
    module = importlib.import_module(f"loom.kernels.{case.kernel}")
    inputs = quantize_inputs(program, module.make_inputs(case.shape))
    return verify(program, inputs, module.reference(*inputs), str(tmp_path / "k.py"))


@pytest.mark.parametrize(
    ("fmt", "fidelity"), TABLE_COMBOS, ids=[f"{d}-{f}" for d, f in TABLE_COMBOS]
)
def test_gemm_compiles_verifies_and_simulates(fmt: str, fidelity: str, tmp_path: Path) -> None:
    program = _lowered(GEMM, fmt, fidelity)
    assert {t.dtype for t in program.tensors} == {fmt}
    assert program.math_fidelity == fidelity
    result = _verify(GEMM, program, tmp_path)
    print(result.message)
    assert result.passed, result.message
    if fmt.startswith("bfp"):
        assert result.tolerance == tolerance(fmt)
        assert "emulated in torch" in result.format_note
        name = {"bfp8": "bfloat8_b", "bfp4": "bfloat4_b"}[fmt]
        assert f"# Data formats: a ttnn.{name}, b ttnn.{name}" in emit(program)
    sim = simulate(program, load_arch(GEMM.arch))
    assert sim.kernel_cycles > 0


def test_low_precision_moves_fewer_bytes_and_runs_faster() -> None:
    arch = load_arch(GEMM.arch)
    runs = {f: simulate(_lowered(GEMM, f, "LoFi"), arch) for f in ("bf16", "bfp8", "bfp4")}
    read = {f: r.bytes_moved.dram_read for f, r in runs.items()}
    assert read["bfp8"] == pytest.approx(read["bf16"] * 1088 / 2048)
    assert read["bfp4"] == pytest.approx(read["bf16"] * 576 / 2048)
    assert runs["bfp4"].kernel_cycles < runs["bfp8"].kernel_cycles < runs["bf16"].kernel_cycles
    hifi4 = simulate(_lowered(GEMM, "bf16", "HiFi4"), arch)
    assert hifi4.kernel_cycles > runs["bf16"].kernel_cycles


def test_flash_decode_with_a_bfloat8_b_kv_cache(tmp_path: Path) -> None:
    program = _lowered(DECODE, "k=bfp8,v=bfp8", "HiFi2")
    dtypes = {t.name: t.dtype for t in program.tensors}
    assert dtypes["k"] == dtypes["v"] == "bfp8" and dtypes["q"] == "bf16"
    result = _verify(DECODE, program, tmp_path)
    assert result.passed, result.message
    arch = load_arch(DECODE.arch)
    bf8 = simulate(program, arch)
    bf16 = simulate(_lowered(DECODE, "", "HiFi2"), arch)
    assert bf8.bytes_moved.dram_read < 0.6 * bf16.bytes_moved.dram_read
    assert bf8.kernel_cycles < bf16.kernel_cycles


def test_an_unknown_argument_is_a_clear_error() -> None:
    from loom.errors import FormatError

    with pytest.raises(FormatError, match=r"names argument 'kv'.*arguments are a, b"):
        apply_formats(GEMM.program(), parse_format_spec("kv=bfp8"))
