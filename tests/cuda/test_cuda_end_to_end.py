"""Each workload: compiled, run on tt-lang-sim launch by launch, compared with FP64."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.cuda_flow import CudaOptions, compile_cuda, model_cuda, simulate_cuda, verify_cuda

ARCH = load_arch("blackhole_p150_13x10")
GOLDEN = Path(__file__).parent / "golden"


def _compile(name: str, defines: dict[str, str], precision: str = "fp32", ann: dict | None = None):  # type: ignore[no-untyped-def, type-arg]
    return compile_cuda(
        f"examples/cuda/{name}.cu",
        CudaOptions(ARCH, precision, tuple(defines.items()), parse_annotations(ann or {}, "test")),
    )


@pytest.mark.parametrize("name", ["gaussian", "jacobi_2d", "syrk"])
def test_checkpoints_print_stably(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    c = _compile(name, {"N": "64", "M": "64", "TSTEPS": "2"})
    golden(GOLDEN / f"{name}.txt", "".join(text for _, text in c.texts))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize(
    "ann",
    [
        {},
        {"tileplan": {"strip_mine": 2}, "task": {"dm_lanes": 2}, "physical": {"cb_depth": 2}},
        {"tileplan": {"strip_mine": 2, "interchange": True}, "task": {"dm_lanes": 2}},
    ],
)
def test_syrk_matches_the_emulated_reference(precision: str, ann: dict) -> None:  # type: ignore[type-arg]
    r = verify_cuda(_compile("syrk", {"N": "64", "M": "64"}, precision, ann))
    assert r.max_rel_error_emulated <= 2.0**-6
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)


@pytest.mark.parametrize(
    "ann",
    [
        {},
        {
            "tileflow": {"stencil_operator": "fused", "guard_copy": "dm"},
            "task": {"dm_lanes": 2},
            "physical": {"cb_depth": 2},
            "tileplan": {"predicates": "all"},
        },
    ],
)
def test_jacobi_matches_the_emulated_reference(ann: dict) -> None:  # type: ignore[type-arg]
    r = verify_cuda(_compile("jacobi_2d", {"N": "64", "TSTEPS": "2"}, "fp32", ann))
    assert r.launches == 4
    assert r.max_rel_error_emulated <= 2.0**-6 and r.rel_frobenius < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_gaussian_matches_the_emulated_reference(precision: str) -> None:
    r = verify_cuda(_compile("gaussian", {"N": "64"}, precision, {"task": {"dm_lanes": 2}}))
    assert r.launches == 126
    assert r.max_rel_error_emulated <= 2.0**-6
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)


def test_gaussian_first_launches_lower_and_simulate() -> None:
    c = _compile("gaussian", {"N": "64"})
    t = simulate_cuda(c, sample=2)
    assert t.launches == 126 and 0 < t.simulated <= 8
    assert model_cuda(c, sample=2) > 0
