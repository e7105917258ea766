"""How the wider Helion surface maps onto the Tile IR's primitives (frontend only)."""

from __future__ import annotations

import textwrap

import pytest

from loom.ir.tile import Elementwise, ExpandDims, Full, Reduce, TileProgram, walk

HEADER = """
import helion
import helion.language as hl
import torch
import torch.nn.functional as F


@helion.kernel(static_shapes=True)
def k(x: torch.Tensor, s: float) -> torch.Tensor:
    m, _ = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].float()
        out[tile_m, :] = ({expr}).to(out.dtype)
    return out
"""


def _program(tmp_path, expr: str) -> TileProgram:  # type: ignore[no-untyped-def]
    import torch

    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(HEADER.replace("{expr}", expr)))
    kernel = kernels_of(load_path(path))["k"]
    return import_kernel(kernel, (torch.zeros(64, 128, dtype=torch.bfloat16), 0.25))


def _ops(program: TileProgram) -> list[str]:
    names = []
    for op in walk(program.body):
        if isinstance(op, Elementwise):
            names.append(op.op)
        elif isinstance(op, Reduce):
            names.append(f"reduce_{op.op}")
        elif isinstance(op, ExpandDims):
            names.append("expand")
        elif isinstance(op, Full):
            names.append(f"full({op.fill})")
    return names


@pytest.mark.parametrize(
    ("expr", "ops"),
    [
        ("row - torch.mean(row, dim=-1, keepdim=True)", ["reduce_sum", "expand", "mul", "sub"]),
        (
            "row - torch.amin(row, dim=-1, keepdim=True)",
            ["neg", "reduce_max", "expand", "neg", "sub"],
        ),
        ("row ** 3", ["mul", "mul"]),
        ("row ** -0.5", ["rsqrt"]),
        ("torch.where(row > s, row, row * s)", ["gt", "mul", "mul", "sub", "mul", "add"]),
        ("F.gelu(row) + torch.sigmoid(row) * s", ["gelu", "sigmoid", "mul", "add"]),
        ("torch.full_like(row, 2.0) * row", ["full(2.0)", "mul"]),
    ],
)
def test_construct_rewrites(tmp_path, expr: str, ops: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert _ops(_program(tmp_path, expr)) == ops


def test_scalar_argument_is_a_constant_and_var_is_two_sums(tmp_path) -> None:  # type: ignore[no-untyped-def]
    program = _program(tmp_path, "row - torch.var(row, dim=-1, keepdim=True) * s")
    scalars = [a for op in walk(program.body) if isinstance(op, Elementwise) for a in op.args]
    assert 0.25 in scalars and 1.0 / 127 in scalars  # s, and 1/(n - 1) of the unbiased var
    assert _ops(program).count("reduce_sum") == 2


def test_one_d_outputs_are_rows_or_columns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    path = tmp_path / "v.py"
    path.write_text(
        textwrap.dedent(
            """
            import helion
            import helion.language as hl
            import torch


            @helion.kernel(static_shapes=True)
            def v(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                m, _ = x.size()
                sums = torch.empty([m], dtype=torch.float32, device=x.device)
                twice = torch.empty_like(y)
                for tile_m in hl.tile(m):
                    sums[tile_m] = x[tile_m, :].float().sum(-1)
                    twice[tile_m] = y[tile_m] * 2.0
                return sums, twice
            """
        )
    )
    kernel = kernels_of(load_path(path))["v"]
    x, y = torch.zeros(64, 128), torch.zeros(64)
    program = import_kernel(kernel, (x, y))
    shapes = {a.name: a.shape for a in program.args}
    assert shapes == {"x": (64, 128), "sums": (64, 1), "y": (1, 64), "twice": (1, 64)}


def _file_program(tmp_path, source: str, args: tuple[object, ...]) -> TileProgram:  # type: ignore[no-untyped-def]
    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent(source))
    (kernel,) = kernels_of(load_path(path)).values()
    return import_kernel(kernel, args)


def test_column_reductions_make_rows_and_per_row_vectors_are_columns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.dataflow import infer_layouts
    from loom.symbolic import Const

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        m, _ = x.size()
        scaled = torch.empty_like(x)
        for tile_m in hl.tile(m):
            keep = tile_m.index[:, None] < 40
            scaled[tile_m, :] = torch.where(keep, x[tile_m, :] * s[tile_m][:, None], 0.0)
        return scaled
    """
    program = _file_program(tmp_path, source, (torch.zeros(64, 128), torch.zeros(64)))
    shapes = {a.name: a.shape for a in program.args}
    assert shapes["s"] == (64, 1) and shapes["tile_m_index"] == (64, 1)  # columns

    column = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def g(x: torch.Tensor) -> torch.Tensor:
        _, n = x.size()
        out = torch.empty_like(x)
        for tile_n in hl.tile(n):
            block = x[:, tile_n].float()
            out[:, tile_n] = (block - block.mean(0, keepdim=True)).to(out.dtype)
        return out
    """
    program = _file_program(tmp_path, column, (torch.zeros(64, 128, dtype=torch.bfloat16),))
    reduce = next(op for op in walk(program.body) if isinstance(op, Reduce))
    assert reduce.axis == 0
    layout = infer_layouts(program)[reduce.result.name].layout
    assert layout.rows == Const(1) and not layout.vector  # one tile row, values in row 0


def test_a_row_mask_on_a_column_broadcasts_the_column_to_the_window(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`where(tile_n.index < k, v[tile_m][:, None], 0)`: the 1-D mask (n) times the
    column (m, 1) is an (m, n) value neither operand has (an outer broadcast), so the
    column is widened to (m, n) before the product (it was multiplied as a column)."""
    import torch

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for tile_m, tile_n in hl.tile(x.size()):
            out[tile_m, tile_n] = torch.where(tile_n.index < 16, v[tile_m][:, None], 0.0)
        return out
    """
    program = _file_program(tmp_path, source, (torch.zeros(64, 128), torch.zeros(64)))
    ops = [op for op in walk(program.body) if isinstance(op, Elementwise)]
    take = next(op for op in ops if op.result.name.startswith("where_a"))
    shapes = sorted(a.rank for a in take.args if not isinstance(a, float))
    assert shapes == [1, 2] and take.result.rank == 2
    wide = next(a for a in take.args if not isinstance(a, float) and a.rank == 2)
    assert wide.shape == take.result.shape  # the column, widened to the window


def test_atomic_add_is_a_gather_and_an_owner_sum(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.ir.tile import Gather, If, Store

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def h(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        m, k = a.size()
        _, n = b.size()
        out = torch.zeros([m, n], dtype=torch.float32, device=a.device)
        for tile_m, tile_n, tile_k in hl.tile([m, n, k]):
            hl.atomic_add(out, [tile_m, tile_n], torch.mm(a[tile_m, tile_k], b[tile_k, tile_n]))
        return out
    """
    a, b = torch.zeros(64, 256, dtype=torch.bfloat16), torch.zeros(256, 64, dtype=torch.bfloat16)
    program = _file_program(tmp_path, source, (a, b))
    gather = next(op for op in program.body if isinstance(op, Gather))
    guard = next(op for op in program.body if isinstance(op, If))
    assert gather.across == "tile_k"
    kinds = [type(op).__name__ for op in guard.body]
    assert kinds == ["Reduce", "Convert", "Store"]  # sum of the partials, bf16 -> fp32, store
    assert isinstance(guard.body[-1], Store) and guard.body[-1].tensor == "out"


def test_barrier_phases_on_one_grid_forward_the_scratch_tiles(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.ir.tile import Load, Store

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def p(x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty_like(x)
        out = torch.empty_like(x)
        for tile_m, tile_n in hl.tile(x.size()):
            scratch[tile_m, tile_n] = x[tile_m, tile_n] * 2.0
        hl.barrier()
        for tile_m, tile_n in hl.tile(x.size()):
            out[tile_m, tile_n] = scratch[tile_m, tile_n] + 1.0
        return out
    """
    program = _file_program(tmp_path, source, (torch.zeros(64, 64, dtype=torch.bfloat16),))
    assert [a.name for a in program.args] == ["x", "out"]  # the scratch tensor is gone
    assert [op.tensor for op in walk(program.body) if isinstance(op, Load)] == ["x"]
    assert [op.tensor for op in walk(program.body) if isinstance(op, Store)] == ["out"]
    assert len(program.grid) == 2
    assert program.after is None  # own-block reads: one launch, no grid barrier


BARRIER_KERNELS = {
    "cross_block_read": """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def p(x: torch.Tensor) -> torch.Tensor:
        m, n = x.size()
        scratch = torch.empty([m, n], dtype=torch.float32, device=x.device)
        out = torch.empty_like(x)
        for tile_m, tile_n in hl.tile([m, n]):
            scratch[tile_m, tile_n] = torch.exp(x[tile_m, tile_n].float())
        hl.barrier()
        for tile_m, tile_n in hl.tile([m, n]):
            total = scratch[tile_m, :].sum(-1, keepdim=True)
            out[tile_m, tile_n] = (scratch[tile_m, tile_n] / total).to(out.dtype)
        return out
    """,
    "overwrite": """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def p(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for tile_m, tile_n in hl.tile(x.size()):
            out[tile_m, tile_n] = x[tile_n, tile_m] * 2.0
        hl.barrier()
        for tile_m, tile_n in hl.tile(x.size()):
            x[tile_m, tile_n] = out[tile_m, tile_n] + 1.0
        return out
    """,
    "other_grid": """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def p(x: torch.Tensor) -> torch.Tensor:
        m, n = x.size()
        tmp = torch.empty_like(x)
        out = torch.empty([m], dtype=torch.float32, device=x.device)
        for tile_m, tile_n in hl.tile([m, n]):
            tmp[tile_m, tile_n] = x[tile_m, tile_n] * 2.0
        hl.barrier()
        for tile_r in hl.tile(m):
            out[tile_r] = tmp[tile_r, :].float().sum(-1)
        return out
    """,
}


@pytest.mark.parametrize("case", sorted(BARRIER_KERNELS))
def test_barrier_phases_that_need_a_grid_barrier_become_launches(tmp_path, case: str) -> None:  # type: ignore[no-untyped-def]
    """A later phase reading other blocks' tiles, overwriting tiles other blocks read, or
    running on another grid: one launch per phase, the DRAM tensor between them an output
    of the first and an input of the second."""
    import torch

    from loom.ir.tile import Store

    x = torch.zeros(64, 64, dtype=torch.bfloat16)
    program = _file_program(tmp_path, BARRIER_KERNELS[case], (x,))
    first, second = program.launches()
    assert (first.name, second.name) == ("p", "p_launch2")
    handed = {op.tensor for op in walk(first.body) if isinstance(op, Store)}
    read = {a.name for a in second.args if a.role == "input"}
    assert handed & read  # what launch 1 stored in DRAM, launch 2 reads
    assert all(a.role == "output" for a in first.args if a.name in handed)
    if case == "other_grid":
        assert [a.tile.name for a in second.grid] == ["tile_r"]


def test_a_leading_axis_reduction_is_a_loop_over_its_slices(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.ir.tile import ForLoop, Load
    from loom.symbolic import Const

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(x: torch.Tensor) -> torch.Tensor:
        _, m, n = x.size()
        out = torch.empty([m, n], dtype=torch.float32, device=x.device)
        for tile_m, tile_n in hl.tile([m, n]):
            out[tile_m, tile_n] = torch.var(x[:, tile_m, tile_n].float(), dim=0)
        return out
    """
    program = _file_program(tmp_path, source, (torch.zeros(4, 64, 64, dtype=torch.bfloat16),))
    loops = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    assert len(loops) == 2  # the mean's sum, then the sum of squared deviations
    for loop in loops:
        assert loop.end == Const(4) and loop.tile.upper == 1
        (load,) = [op for op in loop.body if isinstance(op, Load)]
        assert load.window[0].size == Const(1)  # one slice per iteration
    loads = [op for op in walk(program.body) if isinstance(op, Load)]
    assert all(op.result.shape[0] == Const(1) for op in loads)  # no full-extent load left
    assert not any(isinstance(op, Reduce) for op in walk(program.body))


def test_a_leading_var_over_one_slice_reads_the_mean_loop_as_it_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Over a batch of 1 the keepdim mean has the reduced value's shape, so it looked
    like a value along the axis computed by a loop, and was refused (fuzzer finding)."""
    import torch

    from loom.ir.tile import ForLoop
    from loom.symbolic import Const

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(x: torch.Tensor) -> torch.Tensor:
        _, m, n = x.size()
        out = torch.empty([1, m, n], dtype=torch.float32, device=x.device)
        for tile_m, tile_n in hl.tile([m, n]):
            out[:, tile_m, tile_n] = torch.var(
                x[:, tile_m, tile_n], dim=0, correction=0, keepdim=True
            )
        return out
    """
    program = _file_program(tmp_path, source, (torch.zeros(1, 32, 32),))
    first, second = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    assert first.end == second.end == Const(1)
    (total,) = [c.result.name for c in first.carried]
    # the mean, from the first loop's sum: computed once before the second loop
    # (loom.frontend.licm), which reads it
    between = program.body[program.body.index(first) + 1 : program.body.index(second)]
    (mean,) = [op.results()[0] for op in between if total in {v.name for v in op.operands()}]
    read = {v.name for op in walk(second.body) for v in op.operands()}
    assert mean.name in read


def test_a_looped_argmax_reads_its_tile_indices_and_carries_exact_indices(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.ir.tile import ForLoop

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(x: torch.Tensor) -> torch.Tensor:
        m, n = x.size()
        out = torch.empty([m], dtype=torch.int64, device=x.device)
        for tile_m in hl.tile(m):
            best = hl.full([tile_m], float("-inf"), dtype=torch.float32)
            at = hl.zeros([tile_m], dtype=torch.int64)
            for tile_n in hl.tile(n):
                block = x[tile_m, tile_n]
                peak = torch.amax(block, dim=-1)
                at = torch.where(peak > best, torch.argmax(block, dim=-1) + tile_n.begin, at)
                best = torch.maximum(best, peak)
            out[tile_m] = at
        return out
    """
    program = _file_program(tmp_path, source, (torch.zeros(64, 128),))
    args = {a.name: a for a in program.args}
    assert args["tile_n_index"].shape[-1] == 128 and args["out"].dtype == "fp32"
    (loop,) = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    assert {c.init.dtype for c in loop.carried} == {"fp32"}


def test_int32_ops_between_tiles_stay_int32_and_ops_with_constants_run_in_fp32(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.ir.tile import Convert

    source = """
    import helion
    import helion.language as hl
    import torch


    @helion.kernel(static_shapes=True)
    def f(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        same = torch.empty_like(a)
        scaled = torch.empty_like(a)
        for tile_m, tile_n in hl.tile(a.size()):
            x = a[tile_m, tile_n]
            same[tile_m, tile_n] = x + x
            scaled[tile_m, tile_n] = x * 3
        return same, scaled
    """
    program = _file_program(tmp_path, source, (torch.zeros(64, 64, dtype=torch.int32),))
    assert {a.dtype for a in program.args} == {"int32"}
    ew = [op for op in walk(program.body) if isinstance(op, Elementwise)]
    assert [(op.op, op.result.dtype) for op in ew] == [("add", "int32"), ("mul", "fp32")]
    converts = [op for op in walk(program.body) if isinstance(op, Convert)]
    assert [(c.operand.dtype, c.result.dtype) for c in converts] == [
        ("int32", "fp32"),
        ("fp32", "int32"),
    ]


SLICES = """
import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def k(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0), x.size(1) + y.size(1)], dtype=x.dtype, device=x.device)
    n1 = x.size(1)
    for tile_m in hl.tile(x.size(0)):
        out[tile_m, :n1] = x[tile_m, :]
        out[tile_m, n1:] = y[tile_m, {cols}]
    return out
"""


def test_static_partial_slices_are_constant_windows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.ir.tile import Store
    from loom.symbolic import Const

    args = (torch.zeros(64, 128), torch.zeros(64, 96))
    program = _file_program(tmp_path, SLICES.replace("{cols}", ":"), args)
    stores = [op for op in walk(program.body) if isinstance(op, Store)]
    assert [s.window[1] for s in stores] == [
        type(stores[0].window[1])(Const(0), Const(128)),
        type(stores[0].window[1])(Const(128), Const(96)),
    ]


def test_a_slice_off_the_tile_grid_is_refused_with_its_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from loom.errors import FrontendError

    args = (torch.zeros(64, 128), torch.zeros(64, 96))
    with pytest.raises(FrontendError, match=r"f\.py:13: .*slice 8:None of y.*multiples of 32"):
        _file_program(tmp_path, SLICES.replace("{cols}", "8:").replace("y.size(1)", "88"), args)


BRANCHES = """
import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def k(x: torch.Tensor, beta: float) -> torch.Tensor:
    out = torch.empty_like(x)
    rest = 1 - beta
    for tile_m in hl.tile(x.size(0)):
        v = x[tile_m, :]
        if beta == 0.0:
            v = torch.exp(v)
        elif beta > 1.0:
            v = torch.sigmoid(v)
        else:
            v = v * rest
        out[tile_m, :] = v
    return out
"""


@pytest.mark.parametrize(("beta", "op"), [(0.0, "exp"), (2.0, "sigmoid"), (0.25, "mul")])
def test_a_branch_on_a_scalar_is_decided_at_compile_time(tmp_path, beta, op) -> None:  # type: ignore[no-untyped-def]
    import torch

    program = _file_program(tmp_path, BRANCHES, (torch.zeros(64, 128), beta))
    ops = [o for o in walk(program.body) if isinstance(o, Elementwise)]
    assert [o.op for o in ops] == [op]
    if op == "mul":
        assert ops[0].args[1] == 1 - beta  # `1 - beta` folded on the host


def test_an_operand_read_by_two_matmuls_is_loaded_once() -> None:
    """The GeGLU family's `x[tile_m, tile_k]`, indexed once per accumulator, is one load
    that both matmuls read."""
    from pathlib import Path

    from loom.frontend import import_kernel
    from loom.ir.tile import ForLoop, Load, Matmul
    from loom.kernels.registry import load_path

    family = load_path(Path(__file__).parents[2] / "benchmarks" / "families" / "geglu_mlp.py")
    args = family.make_inputs({"M": 64, "N": 32, "K": 128})
    program = import_kernel(family.geglu_mlp, args)
    loads = [op for op in walk(program.body) if isinstance(op, Load)]
    assert [op.tensor for op in loads] == ["x", "wg", "wu"]
    (loop,) = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    (xk,) = [op.result for op in loop.body if isinstance(op, Load) and op.tensor == "x"]
    assert [mm.lhs for mm in walk(loop.body) if isinstance(mm, Matmul)] == [xk, xk]


def test_two_leading_axes_inserted_on_an_index_are_two_expands() -> None:
    """`tile_v.index[None, None, :]` (GRPO's one-hot select): one ExpandDims per None,
    at its position in the subscript's result (axis 0, then axis 1)."""
    from loom.frontend import import_kernel
    from loom.kernels.examples import EXAMPLES_DIR
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "one_hot_select.py")
    program = import_kernel(kernels_of(module)["one_hot_select"], module.make_inputs())
    expands = [op for op in walk(program.body) if isinstance(op, ExpandDims)]
    assert [(op.axis, op.operand.rank, op.result.rank) for op in expands] == [(0, 1, 2), (1, 2, 3)]
    assert expands[1].operand == expands[0].result


def test_a_tile_stored_by_an_earlier_inner_loop_is_recomputed_not_reloaded() -> None:
    """`h[tile_m, tile_k]` stored in one `hl.tile(k)` loop and read in the next
    (squeeze-and-excitation): the read recomputes `relu(x @ a)` from its loads, so no
    load of `h` races its store."""
    from loom.frontend import import_kernel
    from loom.ir.tile import Load, Matmul
    from loom.kernels.examples import EXAMPLES_DIR
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "stored_recompute.py")
    program = import_kernel(kernels_of(module)["stored_recompute"], module.make_inputs())
    ops = list(walk(program.body))
    assert "h" not in {op.tensor for op in ops if isinstance(op, Load)}
    assert len([op for op in ops if isinstance(op, Matmul)]) == 3  # x @ a twice, h @ b
    assert len({r.name for op in ops for r in op.results()}) == len(
        [r for op in ops for r in op.results()]
    )  # the recomputed values have names of their own


def test_a_tile_stored_by_an_inner_loop_from_a_written_tensor_is_still_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The producers read a tensor the kernel writes: recomputing would read it too, so
    the read stays refused, naming the line."""
    import torch

    from loom.errors import FrontendError

    source = """
        import helion
        import helion.language as hl
        import torch


        @helion.kernel(static_shapes=True)
        def k(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            m, n = x.size()
            out = torch.empty_like(x)
            h = torch.empty_like(x)
            for tile_m in hl.tile(m):
                for tile_n in hl.tile(n):
                    x[tile_m, tile_n] = x[tile_m, tile_n] * 2.0
                    h[tile_m, tile_n] = x[tile_m, tile_n] + 1.0
                for tile_n in hl.tile(n):
                    out[tile_m, tile_n] = h[tile_m, tile_n] * 3.0
            return out, h
        """
    with pytest.raises(FrontendError, match="stores before it"):
        _file_program(tmp_path, source, (torch.zeros(64, 64),))
