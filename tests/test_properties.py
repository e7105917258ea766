"""Property tests: random shapes on random architecture variants never crash the compiler.

Every generated case either compiles to a schedule that respects its architecture (cores
within the grid, L1 within the usable bytes) and lowers, or fails with a named
infeasibility (`InfeasibleError`/`ShapeError` naming the cause). Anything else (any other
exception) is a bug. Architecture variants are real description files: a built-in one
with the grid, usable L1, clock and DRAM bank count changed, validated by `parse_arch`.
A sample of the compiled cases also runs on tt-lang-sim and must match torch.

50 cases by default, 500 in the `slow` suite; `derandomize` keeps CI reproducible.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.arch import Arch, builtin_path, parse_arch
from loom.errors import InfeasibleError, ShapeError
from loom.flows.helion import CompileOptions, CompileResult, compile_kernel
from loom.flows.lowered import verify_lowered
from loom.kernels.registry import KernelSpec, resolve_kernel

BASES = ("wormhole_n150", "blackhole_p150")
_SPECS: dict[str, KernelSpec] = {}
_RAW: dict[str, Any] = {}


def _spec(name: str) -> KernelSpec:
    if name not in _SPECS:
        _SPECS[name] = resolve_kernel(name)
    return _SPECS[name]


def _raw(base: str) -> Any:
    if base not in _RAW:
        _RAW[base] = yaml.safe_load(builtin_path(base).read_text())
    return _RAW[base]


@st.composite
def archs(draw: st.DrawFn) -> Arch:
    """A valid variant of a built-in description."""
    base = draw(st.sampled_from(BASES))
    raw = dict(_raw(base))
    gx = draw(st.integers(1, raw["grid_x"]))
    gy = draw(st.integers(1, raw["grid_y"]))
    raw["name"] = f"{base}_{gx}x{gy}"
    raw["grid_x"], raw["grid_y"] = gx, gy
    raw["worker_noc_x"] = raw["worker_noc_x"][:gx]
    raw["worker_noc_y"] = raw["worker_noc_y"][:gy]
    raw["l1_usable_bytes"] = draw(st.integers(64 * 1024, raw["l1_usable_bytes"]))
    raw["clock_ghz"] = draw(st.sampled_from([0.5, 0.8, 1.0, 1.35, 2.0]))
    dram = dict(raw["dram"])
    dram["banks"] = dram["banks"][: draw(st.integers(1, len(dram["banks"])))]
    raw["dram"] = dram
    raw.pop("sources", None)
    return parse_arch(raw, raw["name"])


def _dim(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low // 32, high // 32).map(lambda t: 32 * t)


@st.composite
def problems(draw: st.DrawFn, big: bool) -> tuple[str, dict[str, int]]:
    top = 1024 if big else 128
    kernel = draw(st.sampled_from(("gemm", "flash_decode", "flash_attention")))
    if kernel == "gemm":
        return kernel, {
            "M": draw(_dim(32, top)),
            "N": draw(_dim(32, top)),
            "K": draw(_dim(32, top)),
        }
    shape = {
        "B": draw(st.integers(1, 2)),
        "H": draw(st.integers(1, 4)),
        "S": draw(_dim(32, top)),
        "D": draw(st.sampled_from([32, 64])),
    }
    return kernel, shape


def _check(kernel: str, shape: dict[str, int], arch: Arch) -> CompileResult | None:
    options = CompileOptions(arch, shape, jobs=1, top_k=1, solver="enumerate")
    try:
        result = compile_kernel(_spec(kernel), options)
    except (InfeasibleError, ShapeError) as err:
        text = str(err)
        assert text and ("fits" in text or "tile" in text or "L1" in text), text
        return None
    s = result.schedule
    assert s.mapping.cores_x <= arch.grid_x and s.mapping.cores_y <= arch.grid_y
    assert 0 < s.l1_bytes <= arch.l1_usable_bytes
    assert s.modeled_cycles > 0 and s.arch == arch.name
    assert result.lowered.lowered.grid == (s.mapping.cores_y, s.mapping.cores_x)
    return result


COMMON = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=50, **COMMON)  # type: ignore[arg-type]
@given(problem=problems(big=False), arch=archs())
def test_compile_or_named_infeasibility(problem: tuple[str, dict[str, int]], arch: Arch) -> None:
    _check(*problem, arch)


def _variant(base: str, grid: tuple[int, int], l1: int, banks: int) -> Arch:
    raw = dict(_raw(base))
    raw.pop("sources", None)
    raw["name"] = f"{base}_variant"
    raw["grid_y"], raw["grid_x"] = grid
    raw["worker_noc_y"] = raw["worker_noc_y"][: grid[0]]
    raw["worker_noc_x"] = raw["worker_noc_x"][: grid[1]]
    raw["l1_usable_bytes"] = l1
    raw["dram"] = {**raw["dram"], "banks": raw["dram"]["banks"][:banks]}
    return parse_arch(raw, raw["name"])


@pytest.mark.parametrize(
    ("base", "grid", "l1", "banks"),
    [("wormhole_n150", (2, 3), 256 * 1024, 3), ("blackhole_p150", (1, 4), 512 * 1024, 2)],
)
def test_sampled_variants_verify(base: str, grid: tuple[int, int], l1: int, banks: int) -> None:
    arch = _variant(base, grid, l1, banks)
    result = _check("gemm", {"M": 64, "N": 128, "K": 96}, arch)
    assert result is not None
    outcome = verify_lowered(_spec("gemm"), result.lowered, result.log, arch)
    assert outcome.passed, outcome.message


@pytest.mark.slow
@settings(max_examples=500, **COMMON)  # type: ignore[arg-type]
@given(problem=problems(big=True), arch=archs())
def test_compile_or_named_infeasibility_many(
    problem: tuple[str, dict[str, int]], arch: Arch
) -> None:
    _check(*problem, arch)


@pytest.mark.slow
@settings(max_examples=20, **COMMON)  # type: ignore[arg-type]
@given(problem=problems(big=False), arch=archs())
def test_sampled_schedules_verify_many(problem: tuple[str, dict[str, int]], arch: Arch) -> None:
    result = _check(*problem, arch)
    if result is not None:
        outcome = verify_lowered(_spec(problem[0]), result.lowered, result.log, arch)
        assert outcome.passed, outcome.message
