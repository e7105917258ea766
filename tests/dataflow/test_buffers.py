"""Virtual buffers and their L1 allocations."""

from __future__ import annotations

from loom.ir.scope import Scope
from loom.report.artifacts import print_buffers


def test_gemm_buffers(buffered) -> None:  # type: ignore[no-untyped-def]
    b = buffered["gemm"]
    roles = {vb.name: (vb.role, vb.producer, vb.consumer, vb.scope.key) for vb in b.buffers}
    assert roles == {
        "acc": ("state", "compute", "compute", "grid"),
        "a_tile": ("load", "reader", "compute", "loop:tile_k"),
        "b_tile": ("load", "writer", "compute", "loop:tile_k"),  # spread over both engines
        "out_out": ("store", "compute", "writer", "grid"),
    }
    acc = b.buffer_of("acc_iter")
    assert acc is not None and acc.base_depth == 2  # read one block, write the next
    assert str(b.allocation_of("a_tile").tiles) == "ceildiv(tile_k, 32)*ceildiv(tile_m, 32)"


def test_attention_gives_k_and_v_their_own_storage_on_both_engines(buffered) -> None:  # type: ignore[no-untyped-def]
    """K and V stream in the same key loop: each keeps its own circular buffer (one CB
    has one producer), so the plan can deal them to the reader and the writer."""
    for kernel in ("flash_attention", "flash_decode"):
        b = buffered[kernel]
        k, v = b.buffer_of("k_tile"), b.buffer_of("v_tile")
        assert k is not None and v is not None and k.death < v.birth
        assert b.allocation_of("k_tile").buffers == ("k_tile",)
        assert b.allocation_of("v_tile").buffers == ("v_tile",)
        assert (k.producer, v.producer) == ("reader", "writer")
    b = buffered["flash_attention"]
    # values read twice get a buffer; single-use ones are computed in their consumer
    assert {"qk", "exp", "alpha", "m_ij"} <= {vb.name for vb in b.buffers}
    # (no `bmm`: the frontend moved the score scale onto q, so the matmul yields `qk`)
    assert {"amax", "sub"} <= set(b.inlined)
    assert b.layouts["m_ij"].vector and not b.layouts["qk"].vector


def test_buffers_other_than_loads_still_share(buffered) -> None:  # type: ignore[no-untyped-def]
    """Only loads are kept apart: decode's two gather partials of one shape share."""
    b = buffered["flash_decode"]
    assert b.allocation_of("m_i_final_partial") == b.allocation_of("l_i_final_partial")


def test_decode_gathers_partials(buffered) -> None:  # type: ignore[no-untyped-def]
    b = buffered["flash_decode"]
    roles = [vb.role for vb in b.buffers]
    assert roles.count("gather_out") == 3 and roles.count("gather_in") == 3
    folds = {vb.name for vb in b.buffers if vb.role == "state" and vb.scope == Scope.grid()}
    assert {"m_max", "l_sum", "o_sum"} <= folds


def test_buffer_report_snapshot(buffered, golden) -> None:  # type: ignore[no-untyped-def]
    for name, b in buffered.items():
        golden(f"dataflow/{name}_buffers.txt", print_buffers(b))


def test_each_scope_owns_its_loop_and_buffers(buffered) -> None:  # type: ignore[no-untyped-def]
    """The grid body and the K loop of GEMM: the loop's variable and block symbol, and the
    load and store buffers issued in it, are held by the scope every stage passes."""
    b = buffered["gemm"]
    by_key = {s.key: s for s in b.scopes}
    loop = by_key["loop:tile_k"]
    assert (loop.block, loop.index) == ("tile_k", "tile_k_id")
    assert set(loop.loads) == {"a_tile", "b_tile"} and loop.stores == ()
    assert by_key["grid"].stores and not by_key["grid"].loads
    for vb in b.buffers:
        assert vb.scope is by_key[vb.scope.key]
        assert (vb.name in vb.scope.loads) == (vb.role == "load")


def test_a_stored_value_read_back_keeps_its_operands_live(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`red` is stored and read again by `x - red`: compute cannot read a store buffer,
    so the lowering rebuilds `red` inside the second output from the first mask's block.
    That mask lives until then, so it cannot share a buffer with the second mask (the
    two shared one, and the compute stream waited it while holding it)."""
    import textwrap

    import torch

    from loom.dataflow import build_buffers
    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        m, n = x.size()
        red_out = torch.empty([m], dtype=torch.float32, device=x.device)
        centred = torch.empty_like(x)
        for tile_m in hl.tile(m):
            red = torch.sum(torch.where(tile_m.index[:, None] < 16, x[tile_m, :], 0.0), dim=-1)
            red_out[tile_m] = red
            again = torch.where(tile_m.index[:, None] < 16, x[tile_m, :], 0.0)
            centred[tile_m, :] = again - red[:, None]
        return red_out, centred
    """
    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent(source))
    (kernel,) = kernels_of(load_path(path)).values()
    b = build_buffers(import_kernel(kernel, (torch.zeros(64, 64),)))
    masks = [vb for vb in b.buffers if vb.role == "compute" and vb.name.startswith("lt")]
    first, second = sorted(masks, key=lambda vb: vb.birth)
    assert first.death > second.birth  # read where the rebuilt `red` is read
    assert b.allocation_of(first.name) != b.allocation_of(second.name)


def test_rebuilt_values_are_counted_per_evaluation() -> None:
    """RMSNorm storing its inverse RMS and scaling the row by it: the store's buffer is
    the writer's, so the scaling statement rebuilds the inverse inline, and with it the
    sum of squares it computes inline (`x_tile_fp32` has a buffer: read, not rebuilt).
    Row statistics' variance squares an inlined difference: `d * d` computes it twice."""
    from loom.dataflow import build_buffers
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.ir.tile import walk
    from loom.kernels.examples import EXAMPLES_DIR
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel(str(EXAMPLES_DIR / "rms_norm.py"))
    b = build_buffers(run_frontend(spec, spec.default_shape, StageLog()))
    ops = {r.name: type(op).__name__ for op in walk(b.program.body) for r in op.results()}
    rebuilt = {ops.get(name, name) for name in b.rebuilt}
    assert set(b.rebuilt.values()) == {1}
    assert {"Elementwise", "Reduce"} <= rebuilt
    assert "x_tile_fp32" not in b.rebuilt and "x_tile" not in b.rebuilt
    spec = resolve_kernel(str(EXAMPLES_DIR / "row_stats.py"))
    b = build_buffers(run_frontend(spec, spec.default_shape, StageLog()))
    squared = next(op for op in walk(b.program.body) if "var_sq" in {r.name for r in op.results()})
    diff = squared.operands()[0].name
    assert squared.operands()[1].name == diff and b.rebuilt[diff] == 1
