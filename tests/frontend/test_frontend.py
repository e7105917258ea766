"""Helion frontend: symbols named after the source, snapshots of the printed IR, errors."""

from __future__ import annotations

import textwrap

import pytest

from loom.errors import FrontendError, ShapeError
from loom.ir.printer import print_tile_program
from loom.ir.tile import ForLoop, Gather, If, Matmul, walk


@pytest.mark.parametrize("name", ["gemm", "flash_attention", "flash_decode"])
def test_printed_ir_snapshot(name: str, tile_programs, golden) -> None:  # type: ignore[no-untyped-def]
    golden(f"frontend/{name}.mlir", print_tile_program(tile_programs[name]))


def test_gemm_symbols_named_after_loop_variables(tile_programs) -> None:  # type: ignore[no-untyped-def]
    p = tile_programs["gemm"]
    syms = {s.name: s for s in p.tile_syms}
    assert list(syms) == ["tile_m", "tile_n", "tile_k"]
    assert (syms["tile_m"].upper, syms["tile_n"].upper, syms["tile_k"].upper) == (256, 512, 128)
    assert all(s.align == 32 for s in syms.values())
    (loop,) = [op for op in walk(p.body) if isinstance(op, ForLoop)]
    assert loop.tile.name == "tile_k" and str(loop.trip_count) == "ceildiv(128, tile_k)"
    (mm,) = [op for op in walk(p.body) if isinstance(op, Matmul)]
    assert mm.acc is not None and mm.acc.name == "acc_iter"


def test_attention_and_decode_structure(tile_programs) -> None:  # type: ignore[no-untyped-def]
    fa = tile_programs["flash_attention"]
    assert [a.tile.name for a in fa.grid] == ["tile_b", "tile_m"]
    (loop,) = [op for op in walk(fa.body) if isinstance(op, ForLoop)]
    assert [c.init.name for c in loop.carried] == ["m_i", "l_i", "acc"]
    fd = tile_programs["flash_decode"]
    syms = {s.name: s for s in fd.tile_syms}
    assert syms["tile_b"].lower == syms["tile_b"].upper == 1  # fixed block size in the source
    assert [op.across for op in walk(fd.body) if isinstance(op, Gather)] == ["tile_s"] * 3
    (guard,) = [op for op in walk(fd.body) if isinstance(op, If)]
    assert str(guard.cond) == "tile_s_id == 0"
    (inner,) = [op for op in walk(fd.body) if isinstance(op, ForLoop)]
    assert str(inner.trip_count) == "ceildiv(tile_s, tile_n)"


def test_printed_ir_parses_as_generic_mlir(tile_programs) -> None:  # type: ignore[no-untyped-def]
    xdsl = pytest.importorskip("xdsl")
    del xdsl
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.parser import Parser

    for program in tile_programs.values():
        ctx = Context(allow_unregistered=True)
        ctx.load_dialect(Builtin)
        ctx.load_dialect(Func)
        module = Parser(ctx, print_tile_program(program)).parse_module()
        names = {op.name for op in module.walk()}
        assert {"func.func"} <= names


def _user_kernel(tmp_path, body: str):  # type: ignore[no-untyped-def]
    from loom.kernels.registry import resolve_kernel

    path = tmp_path / "user_kernel.py"
    path.write_text(textwrap.dedent(body))
    return resolve_kernel(str(path))


USER_HEADER = """
    import torch, helion
    import helion.language as hl
    SHAPE_KEYS = ("M", "N")
    def make_inputs(shape):
        return (torch.zeros(shape["M"], shape["N"], dtype=torch.bfloat16),)
    def reference(x):
        return x
"""


def test_unsupported_op_names_the_source_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog

    spec = _user_kernel(
        tmp_path,
        USER_HEADER
        + """
    @helion.kernel(static_shapes=True)
    def sorter(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for tile_m, tile_n in hl.tile(x.size()):
            out[tile_m, tile_n] = torch.erf(x[tile_m, tile_n])
        return out
    """,
    )
    with pytest.raises(FrontendError, match=r"user_kernel\.py:\d+: Loom cannot compile `erf`"):
        run_frontend(spec, {"M": 64, "N": 64}, StageLog())


def test_unaligned_shape_is_rejected(kernel_specs) -> None:  # type: ignore[no-untyped-def]
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog

    with pytest.raises(ShapeError, match=r"gemm\.py:\d+: kernel gemm: .*M=100.*not a multiple"):
        run_frontend(kernel_specs["gemm"], {"M": 100, "N": 64, "K": 64}, StageLog())


def test_shape_parsing_errors(kernel_specs) -> None:  # type: ignore[no-untyped-def]
    from loom.kernels.registry import parse_shape

    spec = kernel_specs["gemm"]
    assert parse_shape("M=64,N=32,K=96", spec) == {"M": 64, "N": 32, "K": 96}
    with pytest.raises(ShapeError, match="missing: K"):
        parse_shape("M=64,N=32", spec)
    with pytest.raises(ShapeError, match="unknown: X"):
        parse_shape("M=64,N=32,K=32,X=1", spec)
    with pytest.raises(ShapeError, match="not KEY=POSITIVE_INT"):
        parse_shape("M=-4,N=32,K=32", spec)


def test_unknown_kernel_and_bad_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loom.kernels.registry import resolve_kernel

    with pytest.raises(FrontendError, match="neither a shipped kernel"):
        resolve_kernel("not_a_kernel")
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n")
    with pytest.raises(FrontendError, match=r"bad\.py defines no @helion\.kernel function"):
        resolve_kernel(str(bad))


def test_sibling_loops_with_one_name_share_a_symbol(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.ir.tile import ForLoop

    spec = _user_kernel(
        tmp_path,
        USER_HEADER
        + """
    @helion.kernel(static_shapes=True)
    def normalize(x: torch.Tensor) -> torch.Tensor:
        m, n = x.size()
        out = torch.empty_like(x)
        for tile_m in hl.tile(m):
            total = hl.zeros([tile_m], dtype=torch.float32)
            for tile_n in hl.tile(n):
                total = total + torch.sum(x[tile_m, tile_n], -1)
            for tile_n in hl.tile(n):
                out[tile_m, tile_n] = (x[tile_m, tile_n] / total[:, None]).to(out.dtype)
        return out
    """,
    )
    program = run_frontend(spec, {"M": 64, "N": 128}, StageLog())
    loops = [op for op in program.body if isinstance(op, ForLoop)]
    assert [lp.tile.name for lp in loops] == ["tile_n", "tile_n"]
    assert loops[0].tile is loops[1].tile or loops[0].tile == loops[1].tile
    assert [s.name for s in program.tile_syms] == ["tile_m", "tile_n"]
