"""A scalar factor on a matmul's result moves onto the loop-invariant operand
(loom.frontend.hoist): `(q @ k.T) * c` in a key loop becomes `(q * c) @ k.T` before it.
And loop-invariant elementwise ops move before their loop (loom.frontend.licm): Helion's
`attention.py` scales q inside the key loop, `q * c` with q loaded before it."""

from __future__ import annotations

import textwrap

from loom.ir.tile import Convert, Elementwise, ForLoop, Matmul, Op, TileProgram, walk

HEADER = """
    import torch, helion
    import helion.language as hl
    SHAPE_KEYS = ("M", "N")
    def make_inputs(shape):
        q = torch.zeros(shape["M"], 64, dtype=torch.bfloat16)
        k = torch.zeros(shape["N"], 64, dtype=torch.bfloat16)
        return (q, k)
    def reference(q, k):
        return q
"""

BODY = """
    @helion.kernel(static_shapes=True)
    def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        m, d = q.size()
        n = k.size(0)
        out = torch.empty([m, 32], dtype=torch.float32, device=q.device)
        for tile_m in hl.tile(m):
            q_blk = q[tile_m, :]
            best = hl.full([tile_m], float("-inf"), dtype=torch.float32)
            for tile_n in hl.tile(n):
                p = torch.mm(q_blk, k[tile_n, :].T)
                s = p * 0.125
                {extra}
                best = torch.maximum(best, torch.amax(s, -1))
            out[tile_m, :] = torch.zeros([tile_m, 32], dtype=torch.float32) + best[:, None]
        return out
"""


INVARIANT_BODY = BODY.replace(
    "p = torch.mm(q_blk, k[tile_n, :].T)\n                s = p * 0.125\n                ", ""
)
"""The key loop with only `{extra}` before the running max (which reads `s`)."""


def _program(tmp_path, extra: str = "", body: str = BODY) -> TileProgram:  # type: ignore[no-untyped-def]
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel

    path = tmp_path / "user_kernel.py"
    lines = ("\n" + " " * 12).join(textwrap.dedent(extra).strip().splitlines())
    path.write_text(textwrap.dedent(HEADER) + textwrap.dedent(body).replace("{extra}", lines))
    return run_frontend(resolve_kernel(str(path)), {"M": 64, "N": 128}, StageLog())


def _scales(ops) -> list[Elementwise]:  # type: ignore[no-untyped-def]
    return [op for op in ops if isinstance(op, Elementwise) and op.op == "mul"]


def test_the_factor_moves_before_the_loop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    program = _program(tmp_path)
    (loop,) = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    (scale,) = _scales(program.body)  # at grid level, once per query block
    assert scale.args[1] == 0.125 and scale.args[0].name == "q_tile"
    assert not _scales(walk(loop.body))
    (mm,) = [op for op in walk(loop.body) if isinstance(op, Matmul)]
    assert mm.lhs == scale.result and mm.result.name == "s"
    assert any("applied once to its loop-invariant operand q_tile" in n for n in program.notes)


def test_a_product_read_twice_keeps_its_multiply(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`s` and the raw product both read: moving the factor would change the other read."""
    program = _program(tmp_path, "s = s + p")
    assert not _scales(program.body)
    (loop,) = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    assert len(_scales(walk(loop.body))) == 1


def _loop(program: TileProgram) -> ForLoop:
    (loop,) = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    return loop


def _elementwise(ops: tuple[Op, ...]) -> list[Op]:
    return [op for op in ops if isinstance(op, Elementwise | Convert)]


def test_a_scaled_invariant_operand_moves_before_the_loop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    program = _program(
        tmp_path,
        body=INVARIANT_BODY,
        extra="""
        q_scaled = q_blk * 0.18
        s = torch.mm(q_scaled, k[tile_n, :].T)
        """,
    )
    loop = _loop(program)
    (scale,) = [op for op in _elementwise(program.body) if op.results()[0].name == "q_scaled"]
    assert isinstance(scale, Elementwise) and scale.args[1] == 0.18
    assert program.body.index(scale) < program.body.index(loop)
    assert all(op.results()[0].name != "q_scaled" for op in walk(loop.body))
    (mm,) = [op for op in loop.body if isinstance(op, Matmul)]
    assert mm.lhs == scale.result
    assert any("q_scaled does not change in the loop" in n for n in program.notes)


def test_a_chain_of_invariant_ops_moves_together(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The second op reads the first: once the first moves, the second is invariant too."""
    program = _program(
        tmp_path,
        body=INVARIANT_BODY,
        extra="""
        q_scaled = (q_blk * 0.18).to(torch.float32)
        q_shift = q_scaled + 1.0
        s = torch.mm(q_shift.to(torch.bfloat16), k[tile_n, :].T)
        """,
    )
    loop = _loop(program)
    moved = [op.results()[0].name for op in _elementwise(program.body)]
    assert "q_shift" in moved and len(moved) >= 3
    (mm,) = [op for op in loop.body if isinstance(op, Matmul)]
    assert mm.lhs.name in moved  # the last convert moved too


def test_ops_reading_the_loop_stay(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A loaded block (k) and a carried value (best) change every step."""
    program = _program(
        tmp_path,
        body=INVARIANT_BODY,
        extra="""
        k_scaled = k[tile_n, :] * 0.5
        s = torch.mm(q_blk, k_scaled.T) + best[:, None]
        """,
    )
    loop = _loop(program)
    names = {op.results()[0].name for op in _elementwise(loop.body)}
    assert "k_scaled" in names
    assert any(
        isinstance(op, Elementwise) and op.op == "add" and op.results()[0].name == "s"
        for op in loop.body
    )
    assert not any("does not change in the loop" in n for n in program.notes)
