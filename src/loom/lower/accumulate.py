"""Realize each matmul accumulator's placement in the compute stream.

The compute builder lowers every loop-carried value with the state-buffer protocol
(``separate``: two blocks, each step waits one and writes the other)::

    reserve S: S = fill
    loop k: wait a, b, S: reserve S: S = S + a @ b
    wait S: reserve O: O = S                      (the final copy into the output)

With ``l1`` the state keeps one block, held across the loop, and every step adds into it
(packer L1 accumulation; TT-Lang's ``+=`` on a block expression stored into the reserved
block)::

    reserve S: S := fill; loop k: wait a, b: S += a @ b
    wait S: reserve O: O = S

With ``output`` the output block itself is held and accumulated into, in the output's
format, and the final copy disappears::

    reserve O: O := fill; loop k: wait a, b: O += a @ b

`loom.dataflow.accumulate` offers a placement only for accumulators of this shape; this
pass fails loudly if the stream does not have it.
"""

from __future__ import annotations

from dataclasses import replace

from loom.errors import ScheduleError
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    CExpr,
    Compute,
    FillExpr,
    IfCore,
    Loop,
    Reserve,
    Stmt,
    Wait,
)


def place_accumulators(
    stmts: tuple[Stmt, ...], placements: dict[str, tuple[str, str]]
) -> tuple[Stmt, ...]:
    """`stmts` with every accumulator of `placements` (state buffer -> (placement, its
    output buffer)) other than ``separate`` realized; ScheduleError if one is not found."""
    todo = {s: p for s, p in placements.items() if p[0] != "separate"}
    done: set[str] = set()
    out = _rewrite(stmts, todo, done)
    missing = sorted(set(todo) - done)
    if missing:
        raise ScheduleError(
            f"the compute stream has no accumulation loop for accumulator(s) "
            f"{', '.join(missing)} in the form their placement needs; place them 'separate'."
        )
    return out


def _rewrite(
    stmts: tuple[Stmt, ...], todo: dict[str, tuple[str, str]], done: set[str]
) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        state = _fill_of(s)
        if state in todo and i + 1 < len(stmts):
            placement, output = todo[state]
            found = _accumulation(stmts, i, state, output if placement == "output" else "")
            if found is not None:
                fill, loop, consumed = found
                target = output if placement == "output" else state
                held = Reserve(
                    target,
                    (
                        Compute(target, fill, True),
                        _accumulate_loop(loop, state, target),
                    ),
                )
                out.append(held)
                done.add(state)
                i += consumed
                continue
        out.append(_inside(s, todo, done))
        i += 1
    return tuple(out)


def _inside(s: Stmt, todo: dict[str, tuple[str, str]], done: set[str]) -> Stmt:
    match s:
        case Loop(body=body):
            return replace(s, body=_rewrite(body, todo, done))
        case IfCore(then=then, orelse=orelse):
            return replace(s, then=_rewrite(then, todo, done), orelse=_rewrite(orelse, todo, done))
        case Wait(body=body) | Reserve(body=body):
            return replace(s, body=_rewrite(body, todo, done))
    return s


def _fill_of(s: Stmt) -> str:
    """The buffer `s` fills (`reserve S: S = fill`), else ''."""
    if (
        isinstance(s, Reserve)
        and len(s.body) == 1
        and isinstance(s.body[0], Compute)
        and s.body[0].dst == s.buffer
        and isinstance(s.body[0].expr, FillExpr)
    ):
        return s.buffer
    return ""


def _step_expr(stmt: Stmt, state: str) -> CExpr | None:
    """The product `P` of one accumulation step `wait ..S..: reserve S: S = S + P`."""
    if not (isinstance(stmt, Wait) and state in stmt.buffers and len(stmt.body) == 1):
        return None
    inner = stmt.body[0]
    if not (isinstance(inner, Reserve) and inner.buffer == state and len(inner.body) == 1):
        return None
    comp = inner.body[0]
    if not (isinstance(comp, Compute) and comp.dst == state):
        return None
    e = comp.expr
    if isinstance(e, BinaryExpr) and e.op == "add":
        if e.lhs == BlockRef(state) and BlockRef(state) not in _refs(e.rhs):
            return e.rhs
        if e.rhs == BlockRef(state) and BlockRef(state) not in _refs(e.lhs):
            return e.lhs
    return None


def _refs(e: CExpr) -> list[CExpr]:
    found: list[CExpr] = [e] if isinstance(e, BlockRef) else []
    for name in ("lhs", "rhs", "operand"):
        child = getattr(e, name, None)
        if isinstance(child, CExpr):
            found.extend(_refs(child))
    return found


def _accumulation(
    stmts: tuple[Stmt, ...], i: int, state: str, output: str
) -> tuple[FillExpr, Loop, int] | None:
    """(fill, loop, statements consumed) of the accumulation starting at `stmts[i]`;
    with `output`, the final copy `wait S: reserve O: O = S` after it is consumed too."""
    fill = stmts[i].body[0].expr  # type: ignore[attr-defined]
    loop = stmts[i + 1]
    if not (isinstance(loop, Loop) and len(loop.body) == 1):
        return None
    if _step_expr(loop.body[0], state) is None:
        return None
    if not output:
        return fill, loop, 2
    if i + 2 >= len(stmts):
        return None
    copy = stmts[i + 2]
    ok = (
        isinstance(copy, Wait)
        and copy.buffers == (state,)
        and len(copy.body) == 1
        and isinstance(copy.body[0], Reserve)
        and copy.body[0].buffer == output
        and copy.body[0].body == (Compute(output, BlockRef(state)),)
    )
    return (fill, loop, 3) if ok else None


def _accumulate_loop(loop: Loop, state: str, target: str) -> Loop:
    """The loop with each step adding its product into the held block of `target`."""
    step = loop.body[0]
    assert isinstance(step, Wait)
    product = _step_expr(step, state)
    assert product is not None
    rest = tuple(b for b in step.buffers if b != state)
    body: Stmt = Compute(target, product, True)
    if rest:
        body = Wait(rest, (body,))
    return replace(loop, body=(body,))
