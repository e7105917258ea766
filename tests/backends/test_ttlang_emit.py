"""The emitted TT-Lang text: valid Python in the plain subset the TT-Lang compiler
accepts (literals, explicit waits, `for` over literal ranges, `if` on node coordinates,
module-scope pipe nets, one compute and two data-movement kernels)."""

from __future__ import annotations

import ast
import re

import pytest
from cases import FAST
from programs import lowered

from loom.backends.ttlang import emit
from loom.backends.ttlang.emit import ident
from loom.errors import ScheduleError
from loom.ir.program import PipeNet
from loom.symbolic import Sym, cmp, conj, floordiv, mod
from loom.symbolic.pyexpr import cond_to_python as py_cond
from loom.symbolic.pyexpr import to_python as py_expr

CASES = {c.id: c for c in FAST}


@pytest.fixture(scope="module", params=FAST, ids=[c.id for c in FAST])
def source(request: pytest.FixtureRequest) -> str:
    return emit(lowered(request.param))


def _kernels(tree: ast.Module) -> list[ast.FunctionDef]:
    op = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    return [n for n in op.body if isinstance(n, ast.FunctionDef)]


def test_one_operation_with_three_kernels(source: str) -> None:
    tree = ast.parse(source)
    ops = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert len(ops) == 1 and ast.unparse(ops[0].decorator_list[0]).startswith("ttl.operation")
    kinds = [ast.unparse(k.decorator_list[0]) for k in _kernels(tree)]
    assert kinds == ["ttl.datamovement()", "ttl.compute()", "ttl.datamovement()"]


def test_every_copy_is_waited(source: str) -> None:
    issued = re.findall(r"(\w+) = ttl\.copy\(", source)
    for name in set(issued):
        assert source.count(f"{name}.wait()") == issued.count(name)


def test_only_plain_control_flow(source: str) -> None:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        assert not isinstance(node, ast.While | ast.Lambda | ast.ListComp | ast.GeneratorExp)
        if isinstance(node, ast.For):
            assert re.fullmatch(r"range\(\d+\)", ast.unparse(node.iter))
        if isinstance(node, ast.If):
            names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
            assert names <= {"core_y", "core_x"}
    nets = [n for n in tree.body if isinstance(n, ast.Assign) and "PipeNet" in ast.unparse(n)]
    assert all(isinstance(n.targets[0], ast.Name) for n in nets)


def test_generated_gemm_reads_like_tt_lang() -> None:
    text = emit(lowered(CASES["gemm512-wh-mcast-ab-2buf"]))
    assert "@ttl.operation(grid=(8, 8), fp32_dest_acc_en=True)" in text
    assert (
        "a_tile_cb = ttl.make_dataflow_buffer_like(like_bf16_2x4, shape=(2, 4), block_count=2)"
    ) in text
    assert (
        "ttl.copy(a[2 * core_y:2 * core_y + 2, 4 * tile_k_id:4 * tile_k_id + 4], a_tile_wr)"
    ) in text
    assert "MCAST_A_TILE.if_src(" in text and "MCAST_A_TILE.if_dst(" in text
    assert "acc_wr.store(acc_rd + (a_tile_rd @ b_tile_rd))" in text
    assert "ttl.Pipe(src=(0, 7), dst=(slice(0, 1), slice(0, 7)))," in text


def test_generated_flash_decode_merges_through_a_gather_net() -> None:
    text = emit(lowered(CASES["fd-bh-split8-waves-mcast-q"]))
    assert "ttl.Pipe(src=(1, 0), dst=(0, 0))," in text
    assert "GATHER_TILE_S.if_dst(" in text and "GATHER_TILE_S.if_src(" in text
    assert "ttl.block.fill(-3e+38, shape=(1, 1))" in text  # -inf as a finite literal
    assert "ttl.math.reduce_max(qk_rd, dims=[-1], shape=(1, 1))" in text


def test_expressions_print_as_python() -> None:
    x, k = Sym("core_x", 0, 31, 1, "core"), Sym("tile_k_id", 0, 3, 1, "index")
    assert py_expr(2 * x + 4 * k - 1) == "2 * core_x + 4 * tile_k_id - 1"
    assert py_expr(mod(floordiv(x, 2), 4)) == "(core_x // 2) % 4"
    assert py_cond(conj(cmp("==", mod(x, 2), 0), cmp("==", k, 0))) == (
        "(core_x % 2 == 0) and (tile_k_id == 0)"
    )
    assert ident("lambda") == "v_lambda" and ident("a-b") == "a_b"


def test_a_core_outside_every_pipe_cannot_be_expressed() -> None:
    p = lowered(CASES["gemm512-wh-mcast-ab-2buf"])
    net = p.net("mcast_a_tile")
    lonely = PipeNet(net.name, net.kind, net.pipes[:1])
    with pytest.raises(ScheduleError, match="take part in no pipe"):
        emit(type(p)(**{**p.__dict__, "nets": (lonely,)}))
