"""TTNN's SDPA as rewrites of Loom's lowered attention programs
(`loom.baselines.sdpa_program`): the generated causal mask (no DRAM reads of the mask's
inputs), the scale inside exp and the mask on the diagonal block only (no score
arithmetic besides the matmul)."""

from __future__ import annotations

import dataclasses

from loom.arch import load_arch
from loom.baselines.build import build_schedule
from loom.baselines.sdpa_program import generated_masks, source_program, ttnn_softmax
from loom.baselines.ttnn_sdpa import sdpa_policy
from loom.dataflow import build_buffers
from loom.flows.helion import run_frontend
from loom.flows.lowered import lower_schedule
from loom.flows.stages import StageLog
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    Buffer,
    CExpr,
    Compute,
    DramTensor,
    FillExpr,
    Loop,
    MatmulExpr,
    Program,
    ReadDram,
    Reserve,
    Stmt,
    UnaryExpr,
    walk_stmts,
)
from loom.kernels.registry import source_kernel
from loom.sim.compute_cost import CostModel
from loom.sim.params import from_arch
from loom.symbolic import Const, Sym

ARCH = "blackhole_p100a"


def _program(compute: tuple[Stmt, ...], reader: tuple[Stmt, ...] = ()) -> Program:
    buffers = (
        Buffer("q_tile", 2, 2, "bf16", 2, "load"),
        Buffer("k_tile", 2, 2, "bf16", 2, "load"),
        Buffer("tile_n_index_tile", 1, 2, "fp32", 2, "load"),
        Buffer("qk", 2, 2, "bf16", 2),
        Buffer("m", 2, 1, "bf16", 2),
    )
    tensors = (
        DramTensor("k", (1, 64, 64), "bf16", "input", 2, 2),
        DramTensor("tile_n_index", (1, 64), "fp32", "input", 1, 2),
    )
    return Program(
        "flash_attention_causal", ARCH, (1, 1), tensors, buffers, (), reader, compute, ()
    )


SCORES = MatmulExpr(BlockRef("q_tile"), BlockRef("k_tile"), transpose_rhs=True)
SCALED = BinaryExpr("mul", SCORES, FillExpr(0.125, 2, 2))
MASK = BinaryExpr("mul", UnaryExpr("relu", BlockRef("tile_n_index_tile")), FillExpr(1.0e9, 2, 2))


def test_generated_masks_drop_only_the_mask_index_reads() -> None:
    def read(buffer: str, tensor: str) -> Reserve:
        return Reserve(buffer, (ReadDram(buffer, tensor, Const(0), Const(0), 1, 1),))

    loop = Loop(Sym("i", 0, 3), Const(4), (read("k_tile", "k"), read("n_tile", "tile_n_index")))
    program = dataclasses.replace(
        _program((), (loop,)), writer=(read("n_tile", "tile_m_col_index"),)
    )
    got = generated_masks(program)
    (body,) = got.reader
    assert isinstance(body, Loop)
    assert body.body == (read("k_tile", "k"), Reserve("n_tile", ()))
    assert got.writer == (Reserve("n_tile", ()),)


def test_the_scale_and_the_mask_leave_the_score_statement() -> None:
    causal = Compute("qk", BinaryExpr("sub", SCALED, MASK))
    dense = Compute("qk", SCALED)
    for stmt in (causal, dense):
        (got,) = ttnn_softmax(_program((Reserve("qk", (stmt,)),))).compute
        assert got == Reserve("qk", (Compute("qk", SCORES),))


def test_other_arithmetic_is_kept() -> None:
    """A subtraction that reads no mask input (exp(s - max)), a scale of something
    other than a matmul and an accumulating matmul are Loom's and TTNN's alike."""
    kept = (
        Compute("qk", UnaryExpr("exp", BinaryExpr("sub", BlockRef("qk"), BlockRef("m")))),
        Compute("qk", BinaryExpr("mul", BlockRef("qk"), FillExpr(0.5, 2, 2))),
        Compute("qk", BinaryExpr("add", BlockRef("qk"), SCORES)),
    )
    program = _program(kept)
    assert ttnn_softmax(program) == program


def _reads(e: CExpr) -> set[str]:
    if isinstance(e, BlockRef):
        return {e.buffer}
    return set().union(*(_reads(v) for v in vars(e).values() if isinstance(v, CExpr)))


def test_the_lowered_causal_kernel_keeps_its_matmuls_and_gets_cheaper() -> None:
    """On Loom's lowered causal kernel under TTNN's schedule: no compute statement reads
    the mask inputs afterwards, no DRAM read fetches them, every matmul stays, and the
    score statement costs the simulator less."""
    arch = load_arch(ARCH)
    shape = {"B": 1, "H": 2, "S": 256, "D": 64}
    log = StageLog()
    policy = sdpa_policy(shape, (2, 1), True, chunks=(64, 64))
    tile = run_frontend(source_kernel(policy.kernel), shape, log)
    buffered = build_buffers(tile)
    schedule = build_schedule(buffered, arch.name, shape, "HiFi2", policy)
    lowered = lower_schedule(tile, buffered, schedule, arch, log).lowered
    got = source_program(policy, lowered)

    def computes(p: Program) -> list[Compute]:
        return [s for s in walk_stmts(p.compute) if isinstance(s, Compute)]

    def matmuls(e: CExpr) -> int:
        own = isinstance(e, MatmulExpr)
        return own + sum(matmuls(v) for v in vars(e).values() if isinstance(v, CExpr))

    mask = {b.name for b in got.buffers if "index" in b.name}
    assert mask and not any(_reads(c.expr) & mask for c in computes(got))
    assert any(_reads(c.expr) & mask for c in computes(lowered))
    reads = [s for s in walk_stmts(got.reader + got.writer) if isinstance(s, ReadDram)]
    assert reads and not any("index" in r.tensor for r in reads)
    # the scale Loom's frontend moved onto q is dropped (TTNN scales inside exp)
    hoisted = [c for c in computes(lowered) if c.dst == "q_tile_scaled"]
    assert len(hoisted) == 1 and all(c.dst != "q_tile_scaled" for c in computes(got))
    kept = [c for c in computes(lowered) if c not in hoisted]
    assert [matmuls(c.expr) for c in computes(got)] == [matmuls(c.expr) for c in kept]
    before = CostModel(arch, from_arch(arch), lowered, True)
    after = CostModel(arch, from_arch(arch), got, True)
    pairs = list(zip(kept, computes(got), strict=True))
    score = [(a, b) for a, b in pairs if a.expr != b.expr]
    assert score and all(after.cost(b).cycles < before.cost(a).cycles for a, b in score)
