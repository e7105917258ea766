"""The roofline bound (`loom.model.roofline`) on hand-computed cases: a math-bound GEMM
(2MNK at the FPU peak of the fidelity), a memory-bound residual add (its bytes at the DRAM
peak), a softmax whose exp, made dear, binds the SFPU."""

from __future__ import annotations

import dataclasses

import pytest

from loom.arch import Arch, load_arch
from loom.eval.cases import kernel_source
from loom.flows.helion import run_frontend
from loom.flows.stages import StageLog
from loom.ir.tile import TileProgram
from loom.kernels.registry import resolve_kernel
from loom.model.roofline import roofline_bound

WH = "wormhole_n150"


def _program(kernel: str, shape: dict[str, int]) -> TileProgram:
    return run_frontend(resolve_kernel(kernel_source(kernel)), shape, StageLog())


@pytest.fixture(scope="module")
def arch() -> Arch:
    return load_arch(WH)


def test_gemm_is_2mnk_over_the_chips_fpu_peak(arch: Arch) -> None:
    n = 1024
    program = _program("gemm", {"M": n, "N": n, "K": n})
    # HiFi4: 64 cycles per 32x32x32 tile = 1024 flops per cycle per core, 64 cores
    hifi4 = roofline_bound(program, arch, "HiFi4")
    assert hifi4.cores == 64
    assert hifi4.math == pytest.approx(2 * n**3 / (64 * 1024))  # 32768 cycles
    assert hifi4.dram == pytest.approx(3 * n * n * 2 / (12 * 24.0))  # bf16 A, B, C at 288 B/cycle
    assert hifi4.bound == "math" and hifi4.cycles == hifi4.math
    assert hifi4.us == pytest.approx(32768 / 1000)  # 1 GHz
    # LoFi is four times faster: the same GEMM is then bound by its DRAM bytes
    lofi = roofline_bound(program, arch, "LoFi")
    assert lofi.math == pytest.approx(hifi4.math / 4)
    assert lofi.bound == "dram" and lofi.cycles == pytest.approx(hifi4.dram)
    assert lofi.fraction(2 * lofi.cycles) == pytest.approx(0.5)


def test_residual_add_is_its_bytes_over_the_dram_peak(arch: Arch) -> None:
    m, n = 1024, 4096
    bound = roofline_bound(_program("residual_add", {"M": m, "N": n}), arch, "HiFi4")
    assert bound.dram == pytest.approx(3 * m * n * 2 / 288)  # two bf16 inputs, one output
    assert bound.math == pytest.approx(m * n / 1024 * 8 / 64)  # one FPU add, 8 cycles a tile
    # the NoC: the same bytes through 12 DRAM endpoints x 2 NoCs x 32 B
    assert bound.noc == pytest.approx(3 * m * n * 2 / (12 * 2 * 32))
    assert bound.bound == "dram"


def test_softmax_with_a_dear_exp_is_bound_by_the_sfpu(arch: Arch) -> None:
    m, n = 1024, 4096
    program = _program("softmax", {"M": m, "N": n})
    tiles = m * n // 1024
    table = dict(arch.compute.eltwise_cycles_per_tile)
    # per element tile: exp, sub and div; reductions max and sum over the row
    per_tile = table["exp"] + table["sub"] + table["div"]
    per_tile += arch.compute.reduce("max") + arch.compute.reduce("sum")
    real = roofline_bound(program, arch, "HiFi4")
    assert real.math == pytest.approx(tiles * per_tile / 64)
    assert real.bound == "dram"  # at the measured cycles of an exp, softmax is memory-bound
    measured, table["exp"] = table["exp"], 10_000
    dear = dataclasses.replace(
        arch,
        compute=dataclasses.replace(arch.compute, eltwise_cycles_per_tile=tuple(table.items())),
    )
    bound = roofline_bound(program, dear, "HiFi4")
    assert bound.math == pytest.approx(real.math + tiles * (10_000 - measured) / 64)
    assert bound.bound == "math" and bound.dram == real.dram
