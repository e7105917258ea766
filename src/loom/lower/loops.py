"""Loop counters and guards of the tile program, made concrete for one schedule."""

from __future__ import annotations

from collections.abc import Mapping

from loom.errors import ScheduleError
from loom.ir.program import CORE_X, CORE_Y, Loop, Stmt
from loom.ir.tile import ForLoop
from loom.lower.context import LowerContext
from loom.symbolic import Cond, Const, Expr, Sym


def loop_var(op: ForLoop, env: Mapping[str, Expr]) -> tuple[Sym, int]:
    """The Program loop variable standing for `op`'s tile index, and its trip count."""
    count = op.trip_count.subs(env)
    if not isinstance(count, Const):
        raise ScheduleError(
            f"the trip count of the loop over {op.tile.name} ({op.trip_count}) is not fixed "
            "by the schedule's block sizes."
        )
    return Sym(op.index.name, 0, max(count.value - 1, 0), 1, "index"), count.value


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
