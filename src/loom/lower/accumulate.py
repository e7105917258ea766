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

Accumulators whose fills precede one loop that steps them all (two matmuls sharing a K
loop) are held together, the reserves nested around the loop::

    reserve G: G := fill; reserve U: U := fill; loop k: wait ..: G += ..; wait ..: U += ..

`loom.dataflow.accumulate` offers a placement only for accumulators of this shape; this
pass fails loudly if the stream does not have it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial

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
    walk_stmts,
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
        j = i
        while j < len(stmts) and _fill_of(stmts[j]):
            j += 1
        if j == i:
            out.append(_inside(stmts[i], todo, done))
            i += 1
            continue
        held, i = _hold(stmts, i, j, todo, done)
        out.extend(held)
    return tuple(out)


def _hold(
    stmts: tuple[Stmt, ...], i: int, j: int, todo: dict[str, tuple[str, str]], done: set[str]
) -> tuple[list[Stmt], int]:
    """The fills `stmts[i:j]` and the loop after them with every accumulator of `todo`
    among them that the loop accumulates held across it (several accumulators fed by one
    loop nest their held blocks); the index of the first statement not consumed."""
    fills = stmts[i:j]
    loop = stmts[j] if j < len(stmts) else None
    if not isinstance(loop, Loop):
        return [_inside(s, todo, done) for s in fills], j
    states = [_fill_of(s) for s in fills if _fill_of(s) in todo]
    steps = {s: k for s in states if (k := _step_path(loop.body, s)) is not None}
    copies = _copies(stmts, j + 1, {s: todo[s][1] for s in steps if todo[s][0] == "output"})
    held = [s for s in steps if todo[s][0] != "output" or s in copies]
    if not held:
        return [_inside(s, todo, done) for s in fills], j
    body = loop.body
    for s in held:
        held_step = partial(_accumulate_step, state=s, target=_target(s, todo))
        body = _replace_at(body, steps[s], held_step)
    inner: Stmt = replace(loop, body=_rewrite(body, todo, done))
    for s in reversed(held):
        fill = fills[[_fill_of(f) for f in fills].index(s)]
        assert isinstance(fill, Reserve) and isinstance(fill.body[0], Compute)
        target = _target(s, todo)
        inner = Reserve(target, (Compute(target, fill.body[0].expr, True), inner))
    done.update(held)
    kept = [f for f in fills if _fill_of(f) not in held]
    end = j + 1
    while end < len(stmts) and _copy_of(stmts[end]):
        end += 1
    after = [c for c in stmts[j + 1 : end] if _copy_of(c) not in copies]
    return [*kept, inner, *after], end


def _target(state: str, todo: dict[str, tuple[str, str]]) -> str:
    """The block an accumulator is held in: its output's with ``output``, else its own."""
    placement, output = todo[state]
    return output if placement == "output" else state


def _step_path(body: tuple[Stmt, ...], state: str) -> tuple[int, ...] | None:
    """Where the one accumulation step of `state` stands in a loop body (indices through
    the waits on shared operands around it, as when one load feeds two matmuls), when
    the body mentions `state` nowhere else; None otherwise."""
    paths = list(_steps(body, state, ()))
    if len(paths) != 1:
        return None
    rest = _replace_at(body, paths[0], lambda _: Wait((), ()))
    return None if any(_mentions(s, state) for s in walk_stmts(rest)) else paths[0]


def _steps(body: tuple[Stmt, ...], state: str, at: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    for k, s in enumerate(body):
        if _step_expr(s, state) is not None:
            yield (*at, k)
        elif isinstance(s, Wait) and state not in s.buffers:
            yield from _steps(s.body, state, (*at, k))


def _replace_at(
    body: tuple[Stmt, ...], path: tuple[int, ...], new: Callable[[Stmt], Stmt]
) -> tuple[Stmt, ...]:
    """`body` with the statement at `path` (through waits) replaced by `new` of it."""
    k, s = path[0], body[path[0]]
    if len(path) == 1:
        s = new(s)
    else:
        assert isinstance(s, Wait)
        s = replace(s, body=_replace_at(s.body, path[1:], new))
    return (*body[:k], s, *body[k + 1 :])


def _mentions(s: Stmt, buffer: str) -> bool:
    match s:
        case Wait(buffers=bufs):
            return buffer in bufs
        case Reserve(buffer=b):
            return b == buffer
        case Compute(dst=dst, expr=expr):
            return dst == buffer or BlockRef(buffer) in _refs(expr)
    return False


def _copy_of(s: Stmt) -> str:
    """The state `s` copies into its output (`wait S: reserve O: O = S`), else ''."""
    if not (isinstance(s, Wait) and len(s.buffers) == 1 and len(s.body) == 1):
        return ""
    inner = s.body[0]
    if not (isinstance(inner, Reserve) and len(inner.body) == 1):
        return ""
    state = s.buffers[0]
    return state if inner.body == (Compute(inner.buffer, BlockRef(state)),) else ""


def _copies(stmts: tuple[Stmt, ...], start: int, outputs: dict[str, str]) -> dict[str, Stmt]:
    """state -> its final copy into its output (of `outputs`), among the copies that
    directly follow the loop ending before `stmts[start]`."""
    found: dict[str, Stmt] = {}
    k = start
    while k < len(stmts) and (state := _copy_of(stmts[k])):
        copy = stmts[k]
        assert isinstance(copy, Wait) and isinstance(copy.body[0], Reserve)
        if outputs.get(state) == copy.body[0].buffer:
            found[state] = copy
        k += 1
    return found


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


def _accumulate_step(step: Stmt, state: str, target: str) -> Stmt:
    """The step adding its product into the held block of `target`."""
    assert isinstance(step, Wait)
    product = _step_expr(step, state)
    assert product is not None
    rest = tuple(b for b in step.buffers if b != state)
    body: Stmt = Compute(target, product, True)
    return Wait(rest, (body,)) if rest else body
