"""Integer tensors other than int32 read as Loom's int32 tiles (loom.ir.integers): int16
widened exactly, int64 narrowed on the host with its range checked."""

from __future__ import annotations

import pytest

from loom.ir.integers import converts_by_product, integer_read, range_error
from loom.ir.tile import Convert, Load, TileProgram, walk
from loom.kernels.examples import EXAMPLES_DIR


def _example(kernel: str) -> TileProgram:
    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "integer_widths.py")
    maker = getattr(module, f"make_inputs_{kernel}")
    return import_kernel(kernels_of(module)[kernel], maker())


def test_an_int16_argument_is_an_int32_tensor_made_bf16_by_a_product_with_ones() -> None:
    program = _example("int16_matmul")
    assert {a.name: a.dtype for a in program.args}["w"] == "int32"
    (convert,) = [op for op in walk(program.body) if isinstance(op, Convert)][:1]
    assert (convert.operand.dtype, convert.result.dtype) == ("int32", "bf16")
    assert converts_by_product(convert.operand.dtype, convert.result.dtype)


def test_an_int64_argument_loads_as_int32_and_becomes_exact_fp32_indices() -> None:
    program = _example("label_logit")
    assert {a.name: a.dtype for a in program.args}["labels"] == "int32"
    (load,) = [op for op in walk(program.body) if isinstance(op, Load) and op.tensor == "labels"]
    (convert,) = [op for op in walk(program.body) if isinstance(op, Convert)]
    assert convert.operand == load.result
    assert (load.result.dtype, convert.result.dtype) == ("int32", "fp32")
    assert any("labels (torch.int64) is narrowed to int32" in n for n in program.notes)


@pytest.mark.parametrize(
    ("dtype", "low", "high", "refused"),
    [
        ("torch.int64", -(2**24), 2**24, False),
        ("torch.int64", 0, 2**24 + 1, True),
        ("torch.int64", -(2**31), 0, True),
        ("torch.int16", -(2**15), 2**15 - 1, False),
        ("torch.int32", -(2**31), 2**31 - 1, False),
    ],
)
def test_the_host_refuses_int64_values_beyond_exact_fp32_integers(
    dtype: str, low: int, high: int, refused: bool
) -> None:
    message = range_error("labels", dtype, low, high)
    assert (message is not None) == refused
    if message is not None:
        assert "labels" in message and f"+-{2**24}" in message


def test_every_integer_read_stores_int32_and_floats_are_not_integers() -> None:
    assert integer_read("torch.int16") is not None
    assert integer_read("torch.float32") is None
    assert integer_read("torch.uint32") is None
    assert not converts_by_product("fp32", "bf16")
    assert not converts_by_product("int32", "int32")
