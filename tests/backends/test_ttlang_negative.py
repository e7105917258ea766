"""Deliberately corrupted Programs are caught by verification, not passed: a missing
receive or send, a too-small buffer, an L1 overflow, a wrong DRAM window."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from cases import FAST
from programs import lowered, reference

from loom.backends.ttlang import verify
from loom.errors import VerificationError
from loom.ir.program import (
    BinaryExpr,
    Compute,
    FillExpr,
    IfCore,
    Loop,
    Program,
    Receive,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)

CASES = {c.id: c for c in FAST}
Rewrite = Callable[[Stmt], Stmt | None]


def rewrite(stmts: tuple[Stmt, ...], fn: Rewrite) -> tuple[Stmt, ...]:
    """Apply `fn` bottom-up; a None result drops the statement."""
    out = []
    for s in stmts:
        match s:
            case Loop(body=body) | Reserve(body=body) | Wait(body=body):
                s = dataclasses.replace(s, body=rewrite(body, fn))
            case IfCore(then=then, orelse=orelse):
                s = dataclasses.replace(s, then=rewrite(then, fn), orelse=rewrite(orelse, fn))
        new = fn(s)
        if new is not None:
            out.append(new)
    return tuple(out)


def run(case_id: str, **streams: Callable[[Program], Program]) -> object:
    case = CASES[case_id]
    inputs, ref = reference(case)
    program = lowered(case)
    for edit in streams.values():
        program = edit(program)
    return verify(program, inputs, ref)


def with_depth(name: str, depth: int) -> Callable[[Program], Program]:
    def edit(p: Program) -> Program:
        bufs = tuple(
            dataclasses.replace(b, depth=depth) if b.name == name else b for b in p.buffers
        )
        return dataclasses.replace(p, buffers=bufs)

    return edit


def test_missing_multicast_receive_is_a_protocol_violation() -> None:
    def edit(p: Program) -> Program:
        drop = rewrite(p.reader, lambda s: None if isinstance(s, Receive) else s)
        return dataclasses.replace(p, reader=drop)

    with pytest.raises(VerificationError, match=r"rejected kernel 'gemm'.*protocol.*push"):
        run("gemm512-wh-mcast-ab-2buf", edit=edit)


def test_missing_gather_send_deadlocks() -> None:
    def edit(p: Program) -> Program:
        drop = rewrite(
            p.writer,
            lambda s: (
                None
                if isinstance(s, Wait)
                and isinstance(s.body[0], Send)
                and s.body[0].buffer.startswith("acc")
                else s
            ),
        )
        return dataclasses.replace(p, writer=drop)

    with pytest.raises(VerificationError, match="Deadlock"):
        run("fd-wh-split8-one-step", edit=edit)


def test_too_small_state_buffer_deadlocks() -> None:
    with pytest.raises(VerificationError, match=r"Deadlock.*blocked on reserve\(\)"):
        run("gemm512-wh-unicast-1buf", edit=with_depth("acc", 1))


def test_too_small_block_is_a_shape_error() -> None:
    def edit(p: Program) -> Program:
        bufs = tuple(dataclasses.replace(b, rows=1) if b.name == "a_tile" else b for b in p.buffers)
        return dataclasses.replace(p, buffers=bufs)

    with pytest.raises(VerificationError, match="shape"):
        run("gemm512-wh-unicast-1buf", edit=edit)


def test_l1_overflow_fails_verification() -> None:
    with pytest.raises(VerificationError, match="L1 memory limit"):
        run("gemm512-wh-unicast-1buf", edit=with_depth("out_out", 400))


def test_wrong_write_window_is_a_numeric_mismatch() -> None:
    def edit(p: Program) -> Program:
        def shift(s: Stmt) -> Stmt:
            if isinstance(s, WriteDram):
                return dataclasses.replace(s, row=s.col, col=s.row)  # writes the transpose
            return s

        return dataclasses.replace(p, writer=rewrite(p.writer, shift))

    result = run("gemm512-wh-unicast-1buf", edit=edit)
    assert not result.passed and result.max_rel_error > 0.5
    assert result.message.startswith("FAIL gemm")


def test_a_corrupted_compute_is_a_numeric_mismatch() -> None:
    def edit(p: Program) -> Program:
        def double(s: Stmt) -> Stmt:
            if isinstance(s, Compute) and s.dst == "out_out":
                return dataclasses.replace(s, expr=BinaryExpr("mul", s.expr, FillExpr(2.0, 2, 2)))
            return s

        return dataclasses.replace(p, compute=rewrite(p.compute, double))

    result = run("gemm512-wh-unicast-1buf", edit=edit)
    assert not result.passed and result.max_rel_error == pytest.approx(1.0, rel=0.05)  # out = 2 ref
