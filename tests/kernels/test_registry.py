"""Loom's older kernel-module contract (SHAPE_KEYS, make_inputs(shape), reference): 1-D
tensors verify, and a module missing one of its functions is told which."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.errors import FrontendError

VECTOR_FILE = """
import helion
import helion.language as hl
import torch

SHAPE_KEYS = ("N",)
DEFAULT_SHAPE = {"N": 1024}


@helion.kernel(static_shapes=True)
def vector_scale(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] * 2.0 + y[tile]
    return out
"""
MAKE_INPUTS = """

def make_inputs(shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(shape["N"], generator=gen) for _ in range(2))
"""
REFERENCE = """

def reference(x, y):
    return x * 2.0 + y
"""


def _write(tmp_path: Path, *parts: str) -> str:
    path = tmp_path / "vector_scale.py"
    path.write_text("".join(parts))
    return str(path)


def test_one_d_tensors_verify_under_the_older_contract(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from loom.cli import main

    path = _write(tmp_path, VECTOR_FILE, MAKE_INPUTS, REFERENCE)
    code = main(["verify", path, "--shape", "N=1024", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "verify      PASS" in out
    import loom

    result = loom.compile(path, shape={"N": 1024}, jobs=1).verify()
    assert result.passed and result.reference == "the kernel file's reference()"


def test_a_module_missing_a_function_of_the_contract_is_told_which(tmp_path: Path) -> None:
    from loom.kernels.registry import resolve_kernel

    path = _write(tmp_path, VECTOR_FILE, MAKE_INPUTS)
    with pytest.raises(
        FrontendError,
        match=(
            r"vector_scale\.py:6: the kernel file sets SHAPE_KEYS .* defines no reference\(\) "
            r"function: add def reference\(\*inputs\) .* or remove SHAPE_KEYS .* --kernel "
            r"NAME --arg"
        ),
    ):
        resolve_kernel(path)
    path = _write(tmp_path, VECTOR_FILE)
    with pytest.raises(
        FrontendError,
        match=r"defines no make_inputs\(\) and no reference\(\) function: add def "
        r"make_inputs\(shape\) and def reference\(\*inputs\)",
    ):
        resolve_kernel(path)
