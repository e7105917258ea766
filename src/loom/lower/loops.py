"""Loop counters and guards of the tile program, made concrete for one schedule."""

from __future__ import annotations

from collections.abc import Mapping

from loom.errors import ScheduleError
from loom.ir.program import CORE_X, CORE_Y, Loop, Stmt
from loom.ir.tile import ForLoop
from loom.lower.context import LowerContext
from loom.symbolic import Cond, Const, Expr, Sym


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
