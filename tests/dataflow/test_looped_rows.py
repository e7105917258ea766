"""The looped realization of a full-extent row (`loom.dataflow.looped_rows`): the Tile IR
before and after on small hand-written programs, and the looped program evaluated by
Loom's Tile IR reference at several chunk sizes against the program as written."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import loom.kernels.tile_reference as tile_reference
from loom.dataflow import build_buffers
from loom.dataflow.looped_rows import loop_rows
from loom.ir.buffers import load_streams
from loom.ir.printer import print_tile_program
from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    GridAxis,
    Load,
    Matmul,
    Op,
    Reduce,
    Store,
    TensorArg,
    TileProgram,
    Value,
    Window,
    accesses,
)
from loom.kernels.tile_reference import evaluate
from loom.mapping.engines import stored_loop_loads
from loom.symbolic import Const, Expr, Sym

GOLDEN = Path(__file__).parents[1] / "golden" / "dataflow"
M, N = 64, 256
TILE_M = Sym("tile_m", 32, M, 32)
ROW = Sym("tile_m_id", 0, M - 1, 1, "index")


def value(name: str, *shape: Expr | int, dtype: str = "fp32") -> Value:
    return Value(name, tuple(Const(d) if isinstance(d, int) else d for d in shape), dtype)


def rows() -> tuple[Window, ...]:
    return (Window(TILE_M * ROW, TILE_M), Window(Const(0), Const(N)))


def program(
    ops: list[Op], inputs: dict[str, tuple[int, ...]], outputs: tuple[str, ...]
) -> TileProgram:
    args = [TensorArg(n, s, "bf16", "input") for n, s in inputs.items()]
    args += [TensorArg(n, (M, N), "bf16", "output") for n in outputs]
    return TileProgram("t", tuple(args), (GridAxis(TILE_M, ROW, M),), tuple(ops))


X, XF = value("x_tile", TILE_M, N, dtype="bf16"), value("row", TILE_M, N)
LOAD: list[Op] = [Load(X, "x", rows(), 3), Convert(XF, X, 3)]


def softmax() -> TileProgram:
    mx, mxk = value("mx", TILE_M), value("mxk", TILE_M, 1)
    sh, num = value("shifted", TILE_M, N), value("num", TILE_M, N)
    sm, smk = value("sm", TILE_M), value("smk", TILE_M, 1)
    q, qb = value("q", TILE_M, N), value("q_bf16", TILE_M, N, dtype="bf16")
    ops: list[Op] = [
        *LOAD,
        Reduce(mx, "max", XF, 1, 4),
        ExpandDims(mxk, mx, 1, 4),
        Elementwise(sh, "sub", (XF, mxk), 4),
        Elementwise(num, "exp", (sh,), 5),
        Reduce(sm, "sum", num, 1, 6),
        ExpandDims(smk, sm, 1, 6),
        Elementwise(q, "div", (num, smk), 6),
        Convert(qb, q, 6),
        Store("out", rows(), qb, 6),
    ]
    return program(ops, {"x": (M, N)}, ("out",))


def rms_norm_weight() -> TileProgram:
    """Two levels of dependency: sum of squares, then the scaled row times a 1-D weight."""
    sq, ss, ms = value("sq", TILE_M, N), value("ss", TILE_M), value("ms", TILE_M)
    inv, invk = value("inv", TILE_M), value("invk", TILE_M, 1)
    w, wf = value("w", N, dtype="bf16"), value("wf", N)
    y, yw, yb = value("y", TILE_M, N), value("yw", TILE_M, N), value("yb", TILE_M, N, dtype="bf16")
    full_w = (Window(Const(0), Const(1)), Window(Const(0), Const(N)))
    ops: list[Op] = [
        *LOAD,
        Elementwise(sq, "mul", (XF, XF), 4),
        Reduce(ss, "sum", sq, 1, 4),
        Elementwise(ms, "mul", (ss, 1.0 / N), 4),
        Elementwise(inv, "rsqrt", (ms,), 4),
        ExpandDims(invk, inv, 1, 5),
        Elementwise(y, "mul", (XF, invk), 5),
        Load(w, "w", full_w, 5),
        Convert(wf, w, 5),
        Elementwise(yw, "mul", (y, wf), 5),
        Convert(yb, yw, 5),
        Store("out", rows(), yb, 5),
        Store("inv_rms", (Window(TILE_M * ROW, TILE_M), Window(Const(0), Const(1))), inv, 6),
    ]
    p = program(ops, {"x": (M, N), "w": (1, N)}, ("out",))
    return TileProgram(
        p.name, (*p.args, TensorArg("inv_rms", (M, 1), "fp32", "output")), p.grid, p.body
    )


def layer_norm() -> TileProgram:
    """A mean, then the variance of the centred row: two statistics passes."""
    s1, mu, muk = value("s1", TILE_M), value("mu", TILE_M), value("muk", TILE_M, 1)
    c, c2 = value("c", TILE_M, N), value("c2", TILE_M, N)
    s2, var, vk = value("s2", TILE_M), value("var", TILE_M), value("vk", TILE_M, 1)
    r, y, yb = value("r", TILE_M, 1), value("y", TILE_M, N), value("yb", TILE_M, N, dtype="bf16")
    ops: list[Op] = [
        *LOAD,
        Reduce(s1, "sum", XF, 1, 4),
        Elementwise(mu, "mul", (s1, 1.0 / N), 4),
        ExpandDims(muk, mu, 1, 4),
        Elementwise(c, "sub", (XF, muk), 5),
        Elementwise(c2, "mul", (c, c), 5),
        Reduce(s2, "sum", c2, 1, 5),
        Elementwise(var, "mul", (s2, 1.0 / N), 5),
        ExpandDims(vk, var, 1, 5),
        Elementwise(r, "rsqrt", (vk,), 6),
        Elementwise(y, "mul", (c, r), 6),
        Convert(yb, y, 6),
        Store("out", rows(), yb, 6),
    ]
    return program(ops, {"x": (M, N)}, ("out",))


def test_softmax_becomes_one_online_pass_and_a_store_pass(golden) -> None:  # type: ignore[no-untyped-def]
    before = softmax()
    looped = loop_rows(before)
    assert looped is not None
    assert (looped.tile.name, looped.passes, looped.online) == ("tile_x_d1", 1, ("sm",))
    loops = [op for op in looped.program.body if isinstance(op, ForLoop)]
    assert [len(lp.carried) for lp in loops] == [2, 0]  # running max and sum; then stores
    assert looped.tile.domain() == range(32, N + 1, 32)
    golden(GOLDEN / "looped_softmax.mlir", print_tile_program(looped.program))
    assert "in chunks of tile_x_d1 = 64, 1 statistics pass(es) + 1 store pass" in (
        looped.describe(64)
    )


def test_layer_norm_sums_the_row_and_its_squares_in_one_pass(golden) -> None:  # type: ignore[no-untyped-def]
    """The variance about the mean joins the mean's pass: one statistics pass (the
    sum and the sum of squares), then the store pass, so the row is read twice."""
    looped = loop_rows(layer_norm())
    assert looped is not None and looped.passes == 1 and looped.squares == ("s2",)
    loops = [op for op in looped.program.body if isinstance(op, ForLoop)]
    assert [len(lp.carried) for lp in loops] == [2, 0]
    assert all(sum(isinstance(op, Load) for op in lp.body) == 1 for lp in loops)
    golden(GOLDEN / "looped_layer_norm.mlir", print_tile_program(looped.program))
    assert "the variance as a sum of squares with its mean" in looped.describe()


def test_a_variance_about_another_centre_keeps_its_own_pass() -> None:
    """`sum((a - m)**2)` with m not a multiple of `sum(a)` (here the row's max) needs
    m before it reads the row: a pass of its own."""
    ops = layer_norm().body
    top = next(op for op in ops if isinstance(op, Reduce))
    swapped = [dataclasses.replace(op, op="max") if op is top else op for op in ops]
    looped = loop_rows(dataclasses.replace(layer_norm(), body=tuple(swapped)))
    assert looped is not None and looped.passes == 2 and not looped.squares


def test_the_one_pass_variance_of_an_offset_row() -> None:
    """fp32 sums of x and x**2 lose the variance to cancellation only when the mean is
    far larger than the spread: at mean/std = 30 (|mean|**2 / var = 900) the
    normalised bf16 row still matches the two-pass one within the verify's tolerance."""
    before = layer_norm()
    looped = loop_rows(before)
    assert looped is not None
    gen = torch.Generator().manual_seed(5)
    x = (torch.randn(M, N, generator=gen) + 30.0).to(torch.bfloat16).float()
    want = evaluate(before.launches(), {"x": x})["out"]
    got = evaluate(looped.program.launches(), {"x": x})["out"]
    torch.testing.assert_close(got, want, rtol=1.6e-2, atol=1e-2)


def test_a_one_dim_weight_and_a_column_store(golden) -> None:  # type: ignore[no-untyped-def]
    looped = loop_rows(rms_norm_weight())
    assert looped is not None
    golden(GOLDEN / "looped_rms_norm.mlir", print_tile_program(looped.program))
    top = [type(op).__name__ for op in looped.program.body]
    # the column store waits for the statistics, outside every loop
    assert top.index("Store") > top.index("ForLoop")


@pytest.mark.parametrize("chunk", [32, 64, 128])
@pytest.mark.parametrize("make", [softmax, rms_norm_weight, layer_norm])
def test_the_looped_program_computes_what_the_persistent_one_does(
    make: Callable[[], TileProgram], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = make()
    looped = loop_rows(before)
    assert looped is not None
    gen = torch.Generator().manual_seed(chunk)
    inputs = {"x": torch.randn(M, N, generator=gen) * 3, "w": torch.randn(1, N, generator=gen)}
    inputs = {k: v for k, v in inputs.items() if any(a.name == k for a in before.args)}
    want = evaluate(before.launches(), inputs)
    pick = tile_reference._tile_value
    monkeypatch.setattr(
        tile_reference,
        "_tile_value",
        lambda sym: chunk if sym.name == looped.tile.name else pick(sym),
    )
    got = evaluate(looped.program.launches(), inputs)
    assert set(got) == set(want)
    for name in want:
        # summed in another order, a value may round to a neighbouring bf16
        torch.testing.assert_close(got[name], want[name], rtol=1e-2, atol=1e-2)


def test_what_it_does_not_loop() -> None:
    """No reduction, a reduction spanning one tile, a matmul in the body: none."""
    y = value("y", TILE_M, N)
    plain = program(
        [*LOAD, Elementwise(y, "exp", (XF,)), Store("out", rows(), y)], {"x": (M, N)}, ("out",)
    )
    assert loop_rows(plain) is None
    narrow = value("n", TILE_M, 32)
    s = value("s", TILE_M)
    one_tile = program(
        [
            Load(narrow, "x", (Window(TILE_M * ROW, TILE_M), Window(Const(0), Const(32)))),
            Reduce(s, "sum", narrow, 1),
        ],
        {"x": (M, 32)},
        (),
    )
    assert loop_rows(one_tile) is None
    mm = value("mm", TILE_M, TILE_M)
    with_matmul = program([*LOAD, Matmul(mm, XF, XF, rhs_transposed=True)], {"x": (M, N)}, ())
    assert loop_rows(with_matmul) is None


def test_each_pass_deals_its_own_loads_to_the_engines() -> None:
    """The statistics pass and the store pass are one scope (one chunk symbol) but two
    loops, one after the other: the store pass's row chunk goes to the reader as the first
    pass's does (the two share an allocation), and the weight to the writer, beside it in
    the store pass; no engine loads the row twice in one loop."""
    looped = loop_rows(rms_norm_weight())
    assert looped is not None
    buffered = build_buffers(looped.program)
    streams = load_streams(looped.program, buffered.buffers, buffered.allocations)
    # the two passes' row chunks share one allocation, streamed by the first pass's loop
    assert [[a.name for a in s] for s in streams] == [["x_tile_chunk_x_tile_chunk_2"], ["w_chunk"]]
    engines = {vb.name: vb.producer for vb in buffered.buffers if vb.role == "load"}
    assert engines == {"x_tile_chunk": "reader", "x_tile_chunk_2": "reader", "w_chunk": "writer"}


def test_the_store_pass_loads_are_the_ones_a_reader_only_variant_moves() -> None:
    """`stored_loop_loads`: the loads of the loop that stores (the store pass's chunk and
    weight), not the statistics pass's, whose loop stores nothing."""
    looped = loop_rows(rms_norm_weight())
    assert looped is not None
    buffered = build_buffers(looped.program)
    ops = accesses(looped.program.body)
    moved = [ops[i] for i in stored_loop_loads(buffered)]
    assert [op.result.name for op in moved if isinstance(op, Load)] == [
        "x_tile_chunk_2",
        "w_chunk",
    ]
    assert len(moved) == 2
