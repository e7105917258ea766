"""The flop count of small Tile IR programs: a matmul, an elementwise chain, a reduction,
two accumulators, an index-dependent loop and guard, a launch after a barrier."""

from __future__ import annotations

from loom.ir.flops import FlopCount, count_flops
from loom.ir.tile import (
    Convert,
    Elementwise,
    ForLoop,
    Full,
    GridAxis,
    If,
    Load,
    Matmul,
    Op,
    Reduce,
    Store,
    TensorArg,
    TileProgram,
    Value,
    Window,
)
from loom.symbolic import Const, Expr, Sym

TM, TN, TK = Sym("tile_m", 32, 512, 32), Sym("tile_n", 32, 512, 32), Sym("tile_k", 32, 512, 32)
IM, IN, IK = (Sym(f"{t}_id", 0, 64, 1, "index") for t in ("tile_m", "tile_n", "tile_k"))


def _v(name: str, *shape: Expr | int, dtype: str = "bf16") -> Value:
    return Value(name, tuple(Const(d) if isinstance(d, int) else d for d in shape), dtype)


def _w(*sizes: Expr | int) -> tuple[Window, ...]:
    return tuple(Window(Const(0), Const(s) if isinstance(s, int) else s) for s in sizes)


def _program(body: tuple[Op, ...], grid: tuple[GridAxis, ...], *args: TensorArg) -> TileProgram:
    return TileProgram("k", args, grid, body)


def _matmul_program(m: int, n: int, k: int, accumulators: int = 1) -> TileProgram:
    """acc_i += a @ b_i over a loop on k, for `accumulators` weights b_i (a GeGLU MLP's
    gate and up projections share a's blocks)."""
    a = _v("a", TM, TK)
    init = tuple(_v(f"acc{i}", TM, TN, dtype="fp32") for i in range(accumulators))
    body: list[Op] = [Load(a, "a", _w(TM, TK))]
    for i in range(accumulators):
        b = _v(f"b{i}", TK, TN)
        body += [Load(b, f"b{i}", _w(TK, TN)), Matmul(_v(f"r{i}", TM, TN), a, b, init[i])]
    loop = ForLoop(TK, IK, Const(0), Const(k), tuple(body))
    grid = (GridAxis(TM, IM, m), GridAxis(TN, IN, n))
    return _program((*(Full(v, 0.0) for v in init), loop), grid)


def test_a_matmul_counts_2mnk() -> None:
    assert count_flops(_matmul_program(256, 128, 512)) == FlopCount(matmul=2 * 256 * 128 * 512)


def test_two_accumulators_count_both_matmuls() -> None:
    count = count_flops(_matmul_program(256, 128, 512, accumulators=2))
    assert count.matmul == 2 * (2 * 256 * 128 * 512) and count.total == count.matmul


def test_an_elementwise_chain_counts_one_flop_per_element_and_op() -> None:
    x = _v("x", TM, 512)
    y = _v("y", TM, 512)
    z = _v("z", TM, 512)
    body = (
        Load(x, "x", _w(TM, 512)),
        Elementwise(y, "mul", (x, 2.0)),
        Elementwise(z, "exp", (y,)),
        Convert(_v("zc", TM, 512, dtype="fp32"), z),
        Store("out", _w(TM, 512), z),
    )
    count = count_flops(_program(body, (GridAxis(TM, IM, 1024),)))
    n = 1024 * 512  # each op's elements, kept by name for the roofline's cycles per tile
    ops = ((("elementwise", "exp"), n), (("elementwise", "mul"), n))
    assert count == FlopCount(elementwise=2 * n, ops=ops)


def test_a_reduction_counts_the_elements_it_folds() -> None:
    x = _v("x", TM, 512)
    body = (Load(x, "x", _w(TM, 512)), Reduce(_v("s", TM), "sum", x, 1))
    ops = ((("reduce", "sum"), 256 * 512),)  # the operand's elements, the work priced
    assert count_flops(_program(body, (GridAxis(TM, IM, 256),))) == FlopCount(
        reduction=256 * 511, ops=ops
    )


def test_an_index_dependent_loop_and_guard_are_evaluated_per_index() -> None:
    """A causal loop (up to the grid block's end) and a merge on block 0 only."""
    s = _v("s", TM, TN)
    inner = (Elementwise(s, "exp", (_v("q", TM, TN),)),)
    loop = ForLoop(TN, IN, Const(0), TM * (IM + 1), inner)
    merge = If(IM.eq(0), (Elementwise(_v("o", TM, 64), "add", (_v("o0", TM, 64), 1.0)),))
    count = count_flops(_program((loop, merge), (GridAxis(TM, IM, 128),)))
    blocks = 128 // 32
    per_tile = 32 * 32
    assert count.elementwise == per_tile * sum(i + 1 for i in range(blocks)) + 32 * 64


def test_every_launch_counts() -> None:
    first = _matmul_program(64, 64, 64)
    both = TileProgram(
        first.name, first.args, first.grid, first.body, after=_matmul_program(32, 32, 32)
    )
    assert count_flops(both).matmul == 2 * 64**3 + 2 * 32**3
