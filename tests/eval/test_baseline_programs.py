"""The programs `loom eval` lowers for TTNN's attention baselines compute as TTNN's kernels
do (`loom.baselines.sdpa_program`): no separate softmax-scale multiply (TTNN's exp takes
the scale, prefill and decode) and, causal, no mask arithmetic per block and no DRAM reads
of the mask's inputs (TTNN's writer generates the mask). Loom's own program under the same
schedule keeps all three, and the case's simulation cache tells the two apart."""

from __future__ import annotations

import pytest

from loom.baselines.build import build_schedule
from loom.eval.cases import case
from loom.eval.run import EvalOptions, _baselines, _Case, baseline_program
from loom.flows.helion import run_frontend
from loom.flows.lowered import lower_schedule
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    CExpr,
    Compute,
    FillExpr,
    MatmulExpr,
    Program,
    ReadDram,
    walk_stmts,
)

ARCH = "wormhole_n150"
PREFILL = {"B": 1, "H": 2, "S": 256, "D": 64}
DECODE = {"B": 1, "H": 2, "S": 1024, "D": 64}
OPTIONS = EvalOptions(top_k=1, neighbours=False, time_limit_s=2.0)


def _exprs(e: CExpr) -> list[CExpr]:
    return [e, *(x for v in vars(e).values() if isinstance(v, CExpr) for x in _exprs(v))]


def _computes(program: Program) -> list[CExpr]:
    return [
        x for s in walk_stmts(program.compute) if isinstance(s, Compute) for x in _exprs(s.expr)
    ]


def scale_multiplies(program: Program) -> int:
    """Score blocks multiplied by a constant (the softmax scale) after their matmul, or
    the matmul's operand multiplied by it first (the scale Loom's frontend moves onto q,
    `loom.frontend.hoist`)."""
    exprs = _computes(program)
    operands = {
        x.buffer
        for e in exprs
        if isinstance(e, MatmulExpr)
        for x in (e.lhs, e.rhs)
        if isinstance(x, BlockRef)
    }
    hoisted = sum(
        isinstance(s, Compute) and s.dst in operands and isinstance(s.expr, BinaryExpr)
        and s.expr.op == "mul" and isinstance(s.expr.rhs, FillExpr)
        for s in walk_stmts(program.compute)
    )  # fmt: skip
    return hoisted + sum(
        isinstance(e, BinaryExpr) and e.op == "mul"
        and isinstance(e.lhs, MatmulExpr) and isinstance(e.rhs, FillExpr)
        for e in exprs
    )  # fmt: skip


def mask_reads(program: Program) -> tuple[int, int]:
    """(compute reads of the mask's index tiles, DRAM reads of the index tensors)."""
    computes = sum(isinstance(e, BlockRef) and "index" in e.buffer for e in _computes(program))
    stmts = walk_stmts(program.reader + program.writer)
    dram = sum(isinstance(s, ReadDram) and "index" in s.tensor for s in stmts)
    return computes, dram


def _loom_kernel_under(kernel: str, shape: dict[str, int], name: str) -> Program:
    """Loom's kernel lowered under the baseline `name`'s schedule, as computed by Loom."""
    state = _Case(case(kernel, ARCH, shape), OPTIONS)
    policy = dict(_baselines(state.case, state.arch))[name]()
    assert policy is not None
    program = state.program_for(policy, run_frontend(state.spec, shape, state.log))
    buffered = state.buffers_for(policy, program)
    schedule = build_schedule(buffered, ARCH, shape, state.fidelity, policy)
    return lower_schedule(program, buffered, schedule, state.arch, state.log).lowered


@pytest.mark.parametrize(
    ("kernel", "shape", "name"),
    [
        ("flash_attention", PREFILL, "ttnn-sdpa"),
        ("flash_attention_causal", PREFILL, "ttnn-sdpa"),
        ("flash_attention_causal", PREFILL, "ttnn-sdpa-models"),
        ("flash_decode", DECODE, "ttnn-sdpa-decode"),
        ("flash_decode", DECODE, "ttnn-sdpa-decode-models"),
    ],
)
def test_ttnn_baselines_scale_inside_exp_and_generate_the_mask(
    kernel: str, shape: dict[str, int], name: str
) -> None:
    got = baseline_program(case(kernel, ARCH, shape), name, OPTIONS)
    loom = _loom_kernel_under(kernel, shape, name)
    assert scale_multiplies(loom) > 0 and scale_multiplies(got) == 0
    assert mask_reads(got) == (0, 0)
    if kernel == "flash_attention_causal":
        assert all(n > 0 for n in mask_reads(loom))


def test_the_tuned_baseline_is_rewritten_too() -> None:
    got = baseline_program(
        case("flash_attention_causal", ARCH, PREFILL), "ttnn-sdpa-tuned", OPTIONS
    )
    assert scale_multiplies(got) == 0 and mask_reads(got) == (0, 0)


def test_the_simulation_cache_keys_on_the_rewritten_program() -> None:
    """The same schedule simulated as Loom's kernel and as TTNN's: two simulations, the
    baseline's the shorter (it does less work)."""
    state = _Case(case("flash_attention_causal", ARCH, PREFILL), OPTIONS)
    policy = dict(_baselines(state.case, state.arch))["ttnn-sdpa-models"]()
    assert policy is not None
    program = state.program_for(policy, run_frontend(state.spec, PREFILL, state.log))
    buffered = state.buffers_for(policy, program)
    schedule = build_schedule(buffered, ARCH, PREFILL, state.fidelity, policy)
    as_loom, _ = state.simulate(program, buffered, schedule)
    as_ttnn, _ = state.simulate(program, buffered, schedule, policy)
    assert as_ttnn is not as_loom and as_ttnn.cycles < as_loom.cycles
