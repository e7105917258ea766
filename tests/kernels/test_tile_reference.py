"""Loom's Tile IR reference: each op on small hand-written programs against torch, and
traced example kernels against their own references."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from loom.errors import VerificationError
from loom.ir.tile import (
    ELEMENTWISE_OPS,
    Carried,
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Gather,
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
from loom.kernels.tile_reference import evaluate
from loom.symbolic import Const, Expr, Sym

M, N, K = 64, 96, 128
TILE_M = Sym("tile_m", 32, M, 32)
ROW = Sym("tile_m_id", 0, M - 1, 1, "index")
EXAMPLES = Path(__file__).parents[2] / "examples" / "helion"


def rows(extent: int = N) -> tuple[Window, ...]:
    """Rows [tile_m * i, + tile_m) of a full-width tensor."""
    return (Window(TILE_M * ROW, TILE_M), Window(Const(0), Const(extent)))


def value(name: str, *shape: Expr | int, dtype: str = "fp32") -> Value:
    return Value(name, tuple(Const(d) if isinstance(d, int) else d for d in shape), dtype)


def program(
    ops: list[Op], inputs: dict[str, tuple[int, ...]], outputs: dict[str, tuple[int, ...]]
) -> TileProgram:
    args = [TensorArg(n, s, "fp32", "input") for n, s in inputs.items()]
    args += [TensorArg(n, s, "fp32", "output") for n, s in outputs.items()]
    return TileProgram("t", tuple(args), (GridAxis(TILE_M, ROW, M),), tuple(ops))


X = value("x", TILE_M, N)
Y = value("y", TILE_M, N)
LOADS: list[Op] = [Load(X, "x", rows()), Load(Y, "y", rows())]


def run(ops: list[Op], out: Value, shape: tuple[int, ...] = (M, N), **kw: str) -> torch.Tensor:
    x, y = inputs()
    window = rows(shape[1]) if len(shape) == 2 else (Window(TILE_M * ROW, TILE_M),)
    p = program(
        [*LOADS, *ops, Store("out", window, out)], {"x": (M, N), "y": (M, N)}, {"out": shape}
    )
    got = evaluate(p.launches(), {"x": x, "y": y}, **kw)
    assert set(got) == {"out"}
    return got["out"]


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(M, N, generator=gen), torch.rand(M, N, generator=gen) + 0.5


TORCH = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "gt": lambda a, b: (a > b).float(),
    "lt": lambda a, b: (a < b).float(),
    "exp": torch.exp,
    "exp2": torch.exp2,
    "log": lambda a: torch.log(a.abs()),
    "recip": torch.reciprocal,
    "neg": torch.neg,
    "sqrt": lambda a: torch.sqrt(a.abs()),
    "rsqrt": lambda a: torch.rsqrt(a.abs()),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "abs": torch.abs,
    "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
}


@pytest.mark.parametrize("op", sorted(ELEMENTWISE_OPS))
def test_each_elementwise_op_is_the_torch_op(op: str) -> None:
    out = value("r", TILE_M, N)
    x, y = inputs()
    if ELEMENTWISE_OPS[op] == 2:
        got = run([Elementwise(out, op, (X, Y))], out)
        assert torch.equal(got, TORCH[op](x, y))
    else:
        positive = op in ("log", "sqrt", "rsqrt")
        got = run([Elementwise(out, op, (Y if positive else X,))], out)
        assert torch.allclose(got, TORCH[op](y if positive else x), rtol=1e-6, atol=0)


def test_constants_reductions_and_broadcasts() -> None:
    x, y = inputs()
    scaled, total, col, out = (value(n, TILE_M, N) for n in ("s", "t", "c", "o"))
    total = value("t", TILE_M)
    col = value("c", TILE_M, 1)
    got = run(
        [
            Elementwise(scaled, "maximum", (0.25, X)),  # a constant either side
            Reduce(total, "sum", scaled, 1),
            ExpandDims(col, total, 1),
            Elementwise(out, "div", (Y, col)),  # a column broadcast across the row
        ],
        out,
    )
    assert torch.allclose(got, y / x.clamp(min=0.25).sum(1, keepdim=True), rtol=1e-6)
    peak = value("p", TILE_M)
    got = run([Reduce(peak, "max", X, 1)], peak, (M, 1))
    assert torch.equal(got.flatten(), x.amax(1))


def test_fills_and_conversions_round_as_the_kernel_does() -> None:
    x, _ = inputs()
    half, wide, filled, out = (
        value("h", TILE_M, N, dtype="bf16"),
        value("w", TILE_M, N),
        value("f", TILE_M, N),
        value("o", TILE_M, N),
    )
    got = run(
        [
            Convert(half, X),
            Convert(wide, half),
            Full(filled, 2.0),
            Elementwise(out, "mul", (wide, filled)),
        ],
        out,
    )
    assert torch.equal(got, x.to(torch.bfloat16).float() * 2)


def test_fp64_keeps_the_precision_fp32_loses() -> None:
    out = value("o", TILE_M, N)
    ops: list[Op] = [Elementwise(out, "add", (X, 1e-12))]
    x, _ = inputs()
    assert torch.equal(run(ops, out), x + 1e-12)  # fp32: the constant vanishes
    got = run(ops, out, precision="fp64")
    assert got.dtype == torch.float64 and torch.equal(got, x.double() + 1e-12)


def test_matmul_with_accumulator_loop_and_transposed_rhs() -> None:
    """out = sum over k tiles of a[:, k] @ b[k, :] (fp32 accumulator, bf16 operands), and
    the same with b given transposed; the loop's tile is a quarter of K (several trips)."""
    tile_k = Sym("tile_k", 32, 32, 32)
    kid = Sym("tile_k_id", 0, K - 1, 1, "index")
    n = Sym("tile_n", 32, N, 32)
    acc0, acc, nxt, fin = (value(s, TILE_M, n) for s in ("acc0", "acc", "next", "final"))
    a_t, b_t, bt_t = (
        value("a_t", TILE_M, tile_k, dtype="bf16"),
        value("b_t", tile_k, n, dtype="bf16"),
        value("bt_t", n, tile_k, dtype="bf16"),
    )
    for transposed in (False, True):
        load_b = (
            Load(bt_t, "bt", (Window(Const(0), n), Window(tile_k * kid, tile_k)))
            if transposed
            else Load(b_t, "b", (Window(tile_k * kid, tile_k), Window(Const(0), n)))
        )
        body = (
            Load(a_t, "a", (Window(TILE_M * ROW, TILE_M), Window(tile_k * kid, tile_k))),
            load_b,
            Matmul(nxt, a_t, bt_t if transposed else b_t, acc, rhs_transposed=transposed),
        )
        loop = ForLoop(tile_k, kid, Const(0), Const(K), body, (Carried(acc0, acc, nxt, fin),))
        p = TileProgram(
            "mm",
            (
                TensorArg("a", (M, K), "bf16", "input"),
                TensorArg(
                    "bt" if transposed else "b", (N, K) if transposed else (K, N), "bf16", "input"
                ),
                TensorArg("out", (M, N), "fp32", "output"),
            ),
            (GridAxis(TILE_M, ROW, M),),
            (Full(acc0, 0.0), loop, Store("out", rows(), fin)),
        )
        gen = torch.Generator().manual_seed(1)
        a = torch.randn(M, K, generator=gen).to(torch.bfloat16)
        b = torch.randn(K, N, generator=gen).to(torch.bfloat16)
        given = {"a": a, "bt": b.T.contiguous()} if transposed else {"a": a, "b": b}
        got = evaluate(p.launches(), given)["out"]
        assert torch.allclose(got, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


def test_guards_and_split_reductions() -> None:
    parts, total = value("parts", 1, TILE_M, N), value("total", TILE_M, N)
    owner = ROW.eq(0)
    split = [Gather(parts, X, "tile_m"), If(owner, (Reduce(total, "sum", parts, 0),))]
    x, _ = inputs()
    assert torch.equal(run(split, total), x)  # one block along the split axis


def test_int32_values_wrap_as_on_the_device() -> None:
    big = value("big", TILE_M, N, dtype="int32")
    p = TileProgram(
        "i",
        (TensorArg("x", (M, N), "int32", "input"), TensorArg("out", (M, N), "int32", "output")),
        (GridAxis(TILE_M, ROW, M),),
        (
            Load(big, "x", rows()),
            Elementwise(value("s", TILE_M, N, dtype="int32"), "add", (big, big)),
            Store("out", rows(), value("s", TILE_M, N, dtype="int32")),
        ),
    )
    x = torch.full((M, N), 2**30 + 7, dtype=torch.int32)
    got = evaluate(p.launches(), {"x": x})["out"]
    assert got.dtype == torch.int32 and torch.equal(got, x + x)


def test_launches_share_dram_and_every_stored_tensor_comes_back() -> None:
    mid, out = value("m", TILE_M, N), value("o", TILE_M, N)
    first = program(
        [Load(X, "x", rows()), Elementwise(mid, "mul", (X, 3.0)), Store("mid", rows(), mid)],
        {"x": (M, N)},
        {"mid": (M, N)},
    )
    second = program(
        [Load(X, "mid", rows()), Elementwise(out, "add", (X, 1.0)), Store("out", rows(), out)],
        {"mid": (M, N)},
        {"out": (M, N)},
    )
    x, _ = inputs()
    got = evaluate((first, second), {"x": x})
    assert set(got) == {"mid", "out"} and torch.equal(got["out"], x * 3 + 1)


def test_what_it_cannot_evaluate_is_a_verification_error() -> None:
    out = value("o", TILE_M, N)
    p = program([Load(X, "x", rows()), Store("out", rows(), X)], {"x": (M, N)}, {"out": (M, N)})
    with pytest.raises(VerificationError, match=r"no tensor 'x' to read"):
        evaluate(p.launches(), {})
    wide = program(
        [Load(X, "x", rows(2 * N)), Store("out", rows(), out)], {"x": (M, N)}, {"out": (M, N)}
    )
    with pytest.raises(VerificationError, match=r"x\[0:192\] beyond its extent 96"):
        evaluate(wide.launches(), {"x": torch.zeros(M, N)})


@pytest.mark.parametrize(
    "path, kernel",
    [
        ("matmul_relu.py", "matmul_relu"),
        ("split_k_matmul.py", "split_k_matmul"),
        ("softmax_looped.py", "softmax_looped"),
        ("argmax_looped.py", "argmax_looped"),
        ("int32_ops.py", "int32_ops"),
        ("masked_tail.py", "masked_tail"),
        ("host_views.py", "host_views"),
        ("row_stats.py", "row_stats"),
        ("global_norm.py", "global_norm"),
    ],
)
def test_traced_examples_match_their_references(path: str, kernel: str) -> None:
    """The examples' hand-written references and Loom's Tile IR reference agree (to the
    bf16 rounding the hand-written ones apply to their outputs)."""
    from dataclasses import replace

    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.kernels.checks import file_references, launch_references
    from loom.kernels.registry import resolve_kernel
    from loom.kernels.tile_reference import TileIRReference

    spec = resolve_kernel(str(EXAMPLES / path), kernel)
    assert spec.file is not None
    launches = run_frontend(spec, spec.default_shape, StageLog()).launches()

    def references(fk):  # type: ignore[no-untyped-def]
        if len(launches) == 1:
            return file_references(fk, launches[0])[1:]
        return launch_references(fk, launches)[1:]

    expected, used = references(spec.file)
    assert used == spec.file.reference_name
    got, used = references(replace(spec.file, reference=TileIRReference(), reference_name="ours"))
    assert used == "ours" and set(expected) <= set(got)
    for name, want in expected.items():
        diff = (got[name].reshape(want.shape).double() - want.double()).abs().max()
        assert float(diff) <= 2.0**-7 * max(float(want.double().abs().max()), 1.0), name
