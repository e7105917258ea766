"""The CUDA policy space: which axes a workload gets."""

from __future__ import annotations

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.flows.cuda import CudaOptions
from loom.flows.cuda_policies import policy_space

ARCH = load_arch("blackhole_p150_13x10")


def _fuse_values(name: str, defines: tuple[tuple[str, str], ...]) -> set[tuple[str, ...]]:
    space = policy_space(
        f"examples/cuda/{name}.cu", CudaOptions(ARCH, "fp32", defines, parse_annotations({}, "t"))
    )
    return {tuple(d.get("tileplan", {}).get("fuse", ())) for d in space}  # type: ignore[call-overload]


def test_gaussian_has_a_fusion_axis_and_jacobi_none() -> None:
    """Gaussian's factor fusion passes the dependence check, so it is an axis; jacobi's
    fails it (the west read), so its space has no fused sets."""
    assert _fuse_values("gaussian", (("N", "64"),)) == {(), ("Fan1", "Fan2")}
    assert _fuse_values("jacobi_2d", (("N", "64"), ("TSTEPS", "2"))) == {()}
