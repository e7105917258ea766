"""A scalar factor on a matmul's result moves onto the loop-invariant operand
(loom.frontend.hoist): `(q @ k.T) * c` in a key loop becomes `(q * c) @ k.T` before it."""

from __future__ import annotations

import textwrap

from loom.ir.tile import Elementwise, ForLoop, Matmul, TileProgram, walk

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


def _program(tmp_path, extra: str = "") -> TileProgram:  # type: ignore[no-untyped-def]
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel

    path = tmp_path / "user_kernel.py"
    path.write_text(textwrap.dedent(HEADER) + textwrap.dedent(BODY).replace("{extra}", extra))
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
