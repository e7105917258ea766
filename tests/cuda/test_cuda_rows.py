"""Row streaming's column-shift form: a band operator on a shard row, checked exactly."""

from __future__ import annotations

import numpy as np
import pytest

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.cuda.consts import TILE, ConstSpec, const_table
from loom.cuda.rows import RowShift, band_columns, edge_row
from loom.errors import AnnotationError
from loom.flows.cuda import CudaOptions, compile_cuda

ARCH = load_arch("blackhole_p150_13x10")


def _flow(ann: dict):  # type: ignore[no-untyped-def, type-arg]
    opts = CudaOptions(ARCH, "fp32", (("N", "64"), ("TSTEPS", "1")), parse_annotations(ann, "test"))
    c = compile_cuda("examples/cuda/jacobi_2d.cu", opts)
    assert c.flow is not None
    return c.flow.kernel("jacobi_kernel1")


@pytest.mark.parametrize("operator", ["separate", "fused"])
def test_a_column_shift_becomes_one_band_operator_and_two_edge_rows(operator: str) -> None:
    from loom.cuda.rows import widen

    k = _flow({"tileflow": {"stencil_operator": operator}})
    form = widen(k, k.expr)
    (sh,) = form.shifts
    assert sh.own == "a_r_c" and sorted(d for d, _ in sh.terms if d) == [-1, 1]
    assert sorted((h, d) for _, h, d, _ in sh.edges) == [("a_r_cm1", -1), ("a_r_cp1", 1)]
    assert form.operator_shape(sh.band, 3) == (3, 3)
    assert all(form.operator_shape(e[0], 3) == (1, 3) for e in sh.edges)


@pytest.mark.parametrize("width", [1, 2, 3])
def test_band_and_edge_rows_shift_a_shard_row_exactly(width: int) -> None:
    """X @ band + west @ edge_w + east @ edge_e equals the per-tile shifts with halos."""
    rng = np.random.default_rng(7)
    full = rng.standard_normal((TILE, TILE * (width + 2)))
    west, row, east = full[:, :TILE], full[:, TILE:-TILE], full[:, -TILE:]
    specs = {
        "in_w": ConstSpec("hshift_in", -1),
        "edge_w": ConstSpec("hshift_edge", -1),
        "in_e": ConstSpec("hshift_in", 1),
        "edge_e": ConstSpec("hshift_edge", 1),
    }
    sh = RowShift(
        "x",
        "band",
        ((0, "in_w"), (-1, "edge_w"), (0, "in_e"), (1, "edge_e")),
        (("w_row", "west", -1, "edge_w"), ("e_row", "east", 1, "edge_e")),
    )
    band = const_table(band_columns(sh, specs, width))
    assert band.shape == (TILE * width, TILE * width)
    edge_w = const_table(edge_row(-1, specs["edge_w"], width))
    edge_e = const_table(edge_row(1, specs["edge_e"], width))
    got = row @ band + west @ edge_w + east @ edge_e
    want = full[:, TILE - 1 : -TILE - 1] + full[:, TILE + 1 : -TILE + 1]
    np.testing.assert_array_equal(got, want)


def test_a_mixed_table_keeps_one_tile_constants_in_its_top_row() -> None:
    stack = ConstSpec("stack", stack=((ConstSpec("identity"),), ()))
    table = const_table((ConstSpec("identity"), stack))
    assert table.shape == (2 * TILE, 2 * TILE)
    np.testing.assert_array_equal(table[:TILE, :TILE], np.eye(TILE))
    assert not table[TILE:, :TILE].any() and not table[TILE:, TILE:].any()
    np.testing.assert_array_equal(table[:TILE, TILE:], np.eye(TILE))


def test_sender_side_halo_conversion_keeps_row_streaming_illegal() -> None:
    with pytest.raises(AnnotationError, match="compute -> DM -> compute"):
        _flow({"task": {"streaming": "row"}, "tileflow": {"halo_conversion": "sender"}})
