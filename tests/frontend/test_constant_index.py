"""A constant index inside a 32x32 tile reads the tile that holds the element and picks it
out as a masked sum along that dim: a row's last element (a column of one value per row)
reads a row vector of indices, a matrix's row reads a column of them."""

from __future__ import annotations

import pytest

from loom.ir.tile import Load, Reduce, walk
from loom.kernels.examples import EXAMPLES_DIR
from loom.symbolic import Const


@pytest.mark.parametrize(
    ("kernel", "tensor", "dim", "axis", "span"),
    [
        ("minus_last_column", "x", 1, 1, "span32_index"),
        ("minus_chunk_last", "x", 2, 1, "span32_index"),
        ("scaled_row", "x", 0, 0, "span32_col_index"),
    ],
)
def test_an_index_inside_a_tile_is_picked_from_its_tile(
    kernel: str, tensor: str, dim: int, axis: int, span: str
) -> None:
    from loom.frontend import import_kernel
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "constant_picks.py")
    program = import_kernel(getattr(module, kernel), getattr(module, f"make_inputs_{kernel}")())
    loads = [op for op in walk(program.body) if isinstance(op, Load)]
    picked = [op for op in loads if op.tensor == tensor and op.window[dim].size == Const(32)]
    assert [op.window[dim].offset for op in picked] == [Const(32)]  # the tile of 63 or 40
    assert span in {op.tensor for op in loads}
    sums = [op for op in walk(program.body) if isinstance(op, Reduce)]
    assert [(op.op, op.axis) for op in sums] == [("sum", axis)]
