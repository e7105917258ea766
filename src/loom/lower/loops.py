"""Loop counters and guards of the tile program, made concrete for one schedule."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields, replace

from loom.errors import ScheduleError
from loom.ir.program import CORE_X, CORE_Y, Loop, Reserve, Stmt, Wait, WriteDram
from loom.ir.scope import Scope
from loom.ir.tile import ForLoop
from loom.lower.context import LowerContext
from loom.symbolic import Cond, Const, Expr, Sym, add, floordiv, mod


def loop_var(op: ForLoop, env: Mapping[str, Expr]) -> tuple[Sym, Expr]:
    """The Program loop variable standing for `op`'s tile index, and its trip count: a
    constant, or (a loop bounded by a grid tile, `hl.tile(0, tile_m.end)`) an expression
    of the core's coordinates and waves that each core evaluates for itself."""
    count = op.trip_count.subs(env)
    if isinstance(count, Const):
        return Sym(op.index.name, 0, max(count.value - 1, 0), 1, "index"), count
    extra = count.free_names() - {CORE_X.name, CORE_Y.name} - _wave_names(env)
    if extra:
        raise ScheduleError(
            f"the trip count of the loop over {op.tile.name} ({op.trip_count}) is not fixed "
            f"by the schedule's block sizes (it depends on {sorted(extra)})."
        )
    block = op.tile.subs(env)
    tiles = -(-op.tile.upper // block.value) if isinstance(block, Const) else op.index.upper + 1
    return Sym(op.index.name, 0, max(tiles - 1, 0), 1, "index"), count


def _wave_names(env: Mapping[str, Expr]) -> set[str]:
    """Names of the wave loop counters the grid indices are written in."""
    names: set[str] = set()
    for value in env.values():
        names |= {n for n in value.free_names() if n.endswith("_wave")}
    return names


def core_cond(cond: Cond, env: Mapping[str, Expr]) -> Cond:
    """A guard of the tile program as a condition on the core coordinates."""
    out = cond.subs(env)
    extra = out.free_names() - {CORE_X.name, CORE_Y.name}
    if extra:
        raise ScheduleError(
            f"the guard `{cond}` depends on {sorted(extra)} under this schedule; Loom lowers "
            "guards that depend on the core only (a split axis must run in one wave)."
        )
    return out


def with_waves(ctx: LowerContext, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """Run `body` once per temporal wave of every grid axis (outer axes outermost)."""
    for axis in reversed(ctx.axes):
        if axis.wave_var is not None and body:
            body = (Loop(axis.wave_var, Const(axis.waves), body),)
    return body


def with_waves_stores_late(ctx: LowerContext, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """The writer's stream: `body` once per wave, as `with_waves`, except that an engine
    which also loads inside the grid body (GEMM's B, copied on the writer) issues each
    wave's stores after the next wave's first loads, when the grid's store block is
    double buffered (b_store = 1): the first wave's loads, then one loop over the other
    waves (as many loads as the loop's buffer holds, the previous wave's stores, the
    other loads), then the last wave's stores. The waves run in `with_waves`' order,
    counted by one loop whose index gives each axis's wave counter (TT-Lang's control
    flow stays `range` loops and core conditions).

    Stored in program order, the stores sit between two waves' loads, so the compute
    waits for them before the next wave's first block arrives. One wave later they
    overlap the compute, which has the other store block to fill: Wormhole
    16384x16384x256, x8_y8 [416, 256, 128] with B on the writer, 4 318 904 simulated
    cycles in program order, 2 812 815 with the stores one wave late (the compute 62% ->
    96% busy). `loom.model.stores.Stores.store_in_body` charges the same rule
    (`late_store_occupancy`)."""
    tail = _trailing_stores(body)
    waves = [(a.wave_var, a.waves) for a in ctx.axes if a.wave_var is not None]
    total = math.prod(count for _, count in waves)
    if not (stores_late(ctx.schedule.pipeline) and tail and total > 1 and _loads(body[:-tail])):
        return with_waves(ctx, body)
    head, stores = body[:-tail], body[-tail:]
    wave = Sym(LATE_WAVE, 0, total - 2, 1, "index")

    def at(index: Expr) -> dict[str, Expr]:
        """Each axis's wave counter at linear wave `index` (the last axis innermost)."""
        out: dict[str, Expr] = {}
        stride = 1
        for var, count in reversed(waves):
            out[var.name] = mod(floordiv(index, stride), count)
            stride *= count
        return out

    first, rest = _split_loads(ctx, head)
    steady = (
        *_subs(first, at(add(wave, 1))),
        *_subs(stores, at(wave)),
        *_subs(rest, at(add(wave, 1))),
    )
    return (
        *_subs(head, at(Const(0))),
        Loop(wave, Const(total - 1), steady),
        *_subs(stores, at(Const(total - 1))),
    )


def _split_loads(ctx: LowerContext, head: tuple[Stmt, ...]) -> tuple[tuple[Stmt, ...], ...]:
    """`head` cut after as many iterations of its first loop as that loop's buffer has
    blocks: the loads the engine can issue before the compute frees a block, so the
    stores go right after them (a later store would hold back the loads the compute
    waits for next)."""
    for i, s in enumerate(head):
        if not isinstance(s, Loop) or not isinstance(s.count, Const):
            continue
        buffers = [r.buffer for r in s.body if isinstance(r, Reserve)]
        depth = min((ctx.cbs[b].depth for b in buffers if b in ctx.cbs), default=0)
        if not depth or s.count.value <= depth:
            break
        left = s.count.value - depth
        var = Sym(s.var.name, 0, left - 1, 1, "index")
        first = replace(s, var=Sym(s.var.name, 0, depth - 1, 1, "index"), count=Const(depth))
        rest = replace(s, var=var, count=Const(left), body=_subs(s.body, {var.name: var + depth}))
        return (*head[:i], first), (rest, *head[i + 1 :])
    return head, ()


LATE_WAVE = "wave"
"""The loop counter of `with_waves_stores_late`: the waves whose stores are issued."""


def stores_late(pipeline: dict[str, dict[str, int]]) -> bool:
    """Whether a store engine that also loads in the grid body stores one wave late: with
    a double-buffered grid store block (the grid's b_store knob, which only a candidate
    storing late has for such an engine: `loom.mapping.engines`)."""
    return pipeline.get(Scope.grid().key, {}).get("b_store", 0) == 1


def _trailing_stores(body: tuple[Stmt, ...]) -> int:
    """How many statements at the end of `body` only write waited blocks to DRAM."""
    n = 0
    for s in reversed(body):
        if not (isinstance(s, Wait) and all(isinstance(w, WriteDram) for w in s.body)):
            break
        n += 1
    return n


def _loads(stmts: tuple[Stmt, ...]) -> bool:
    """Whether `stmts` load inside a loop (the engine streams a tile loop's blocks)."""
    return any(isinstance(s, Loop) for s in stmts)


def _subs(stmts: tuple[Stmt, ...], env: Mapping[str, Expr]) -> tuple[Stmt, ...]:
    """`stmts` with the symbols of `env` replaced in every expression they hold."""
    out = []
    for s in stmts:
        changes: dict[str, object] = {}
        for f in fields(s):
            v = getattr(s, f.name)
            if isinstance(v, Expr | Cond):
                changes[f.name] = v.subs(env)
            elif isinstance(v, tuple) and v and all(isinstance(x, Stmt) for x in v):
                changes[f.name] = _subs(v, env)
        out.append(replace(s, **changes))
    return tuple(out)
