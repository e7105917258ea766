"""Row gathers by loaded indices: a one-hot matmul over the whole table
(loom.frontend.gathers)."""

from __future__ import annotations

from loom.ir.tile import Convert, Elementwise, ExpandDims, Load, Matmul, TileProgram, walk
from loom.kernels.examples import EXAMPLES_DIR
from loom.symbolic import Const


def _program() -> TileProgram:
    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "embedding_rows.py")
    return import_kernel(kernels_of(module)["embedding_rows"], module.make_inputs())


def test_a_row_gather_is_a_one_hot_matmul_over_the_whole_table() -> None:
    program = _program()
    ops = list(walk(program.body))
    loads = {op.tensor: op for op in ops if isinstance(op, Load)}
    assert set(loads) == {"idx", "span96_index", "weight"}
    table = loads["weight"]
    assert table.window[0].size == Const(96)  # every row of the table, in each block
    (matmul,) = [op for op in ops if isinstance(op, Matmul)]
    assert matmul.rhs == table.result
    assert matmul.lhs.shape[1] == Const(96)
    (onehot,) = [op for op in ops if isinstance(op, Elementwise) and op.result == matmul.lhs]
    assert onehot.op == "sub" and onehot.args[0] == 1.0  # 1 - ((j < idx) + (j > idx))
    assert {"lt", "gt"} <= {op.op for op in ops if isinstance(op, Elementwise)}
    assert any(isinstance(op, ExpandDims) and op.operand.dtype == "fp32" for op in ops)
    converts = [(c.operand.dtype, c.result.dtype) for c in ops if isinstance(c, Convert)]
    assert converts == [("int32", "fp32"), ("fp32", "bf16")]


def test_a_gather_other_than_whole_rows_is_refused_by_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import textwrap

    import pytest
    import torch

    from loom.errors import FrontendError
    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    path = tmp_path / "g.py"
    path.write_text(
        textwrap.dedent(
            """
            import helion
            import helion.language as hl
            import torch


            @helion.kernel(static_shapes=True)
            def g(idx: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
                out = torch.empty([w.size(0), idx.size(0)], dtype=w.dtype, device=w.device)
                for tile_m, tile_n in hl.tile([w.size(0), idx.size(0)]):
                    out[tile_m, tile_n] = w[tile_m, idx[tile_n]]
                return out
            """
        )
    )
    (kernel,) = kernels_of(load_path(path)).values()
    args = (torch.zeros(64, dtype=torch.int32), torch.zeros(64, 64))
    with pytest.raises(
        FrontendError, match=r"g.py:11: .*a gather from w by loaded or computed indices"
    ):
        import_kernel(kernel, args)


def test_an_element_per_row_of_a_flat_view_is_selected_from_the_loaded_rows() -> None:
    from loom.frontend import import_kernel
    from loom.ir.tile import Reduce
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "cross_entropy_rows.py")
    kernel = kernels_of(module)["cross_entropy_rows"]
    program = import_kernel(kernel, module.make_inputs())
    ops = list(walk(program.body))
    loads = [op.tensor for op in ops if isinstance(op, Load)]
    assert "logits_flat" not in loads and loads.count("logits") == 1  # one read of the rows
    assert not any(isinstance(op, Matmul) for op in ops)
    sums = [op for op in ops if isinstance(op, Reduce) and op.op == "sum"]
    picked = [op for op in sums if op.operand.name.startswith("picked")]
    assert len(picked) == 1 and picked[0].axis == 1
