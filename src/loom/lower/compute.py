"""The compute stream: every op whose result has a buffer becomes reserve-compute-push,
enclosed in the waits of the blocks it reads (see loom.lower.waits).

Loop-carried values follow the state-buffer protocol: the init is pushed before the
loop, each iteration waits the current block, reserves the next one and pushes it, and
the block left after the last iteration is the loop's result. When that result is never
read, the last iteration is peeled so that it pushes no block nobody would pop (a
leftover block would be read as the next wave's state). A loop whose results only feed
the next loop's carried inits (causal attention: the diagonal key block, then the keys
below it) pushes its last blocks only on the cores where that loop runs an iteration
to pop them, when the next loop's own result is never read (`Skip`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from loom.errors import ScheduleError
from loom.ir.program import IfCore, Loop, Stmt
from loom.ir.tile import (
    Carried,
    ExpandDims,
    ForLoop,
    Full,
    Gather,
    If,
    Load,
    Op,
    Store,
    unread_results,
    walk,
)
from loom.lower.context import LowerContext
from loom.lower.exprs import Built, ExprBuilder
from loom.lower.loops import core_cond, loop_var
from loom.lower.waits import Step, produce, wrap
from loom.symbolic import Cond, Const, Expr, cmp

MergeHook = Callable[[tuple[Gather, ...], If, dict[str, Expr]], list[Step]]

Skip = Mapping[str, Cond | None]
"""State buffers the last iteration of a loop pushes into only under a condition on the
core (None: never, its block is never read)."""


@dataclass
class ComputeBuilder:
    ctx: LowerContext
    merge: MergeHook | None = None
    """Lowers a split reduction (gathers + the owner's merge) to compute steps."""

    def cb_map(self) -> dict[str, str]:
        """Key -> buffer for every key the compute stream may wait for."""
        out: dict[str, str] = {}
        for name in self.ctx.buffered.layouts:
            cb = self.ctx.read_cb(name)
            if cb is not None:
                out[self.ctx.root(name)] = cb
        return out

    def stream(self) -> tuple[Stmt, ...]:
        steps = self.level(self.ctx.program.body, dict(self.ctx.env), skip={})
        top = wrap(steps, self.owned(self.ctx.program.body), self.cb_map())
        left = frozenset().union(*(s.reads for s in top))
        if left:
            raise ScheduleError(f"compute reads {sorted(left)} that no scope produces.")
        return tuple(s.stmt for s in top)

    def loaded(self) -> frozenset[str]:
        """Values read from DRAM by a Load (the reader produces them)."""
        return frozenset(
            op.result.name for op in walk(self.ctx.program.body) if isinstance(op, Load)
        )

    def owned(self, ops: tuple[Op, ...], carried: tuple[Carried, ...] = ()) -> set[str]:
        """Keys whose blocks are consumed at this level."""
        keys = {c.arg.name for c in carried}
        for op in ops:
            if isinstance(op, ExpandDims):
                continue
            keys.update(r.name for r in op.results())
        return keys

    def level(self, ops: tuple[Op, ...], env: dict[str, Expr], skip: Skip) -> list[Step]:
        """Steps of one nesting level; `skip` names buffers not to push into (the
        state of a carried value whose final block nobody reads), or to push into only
        under a condition."""
        steps: list[Step] = []
        i = 0
        while i < len(ops):
            op = ops[i]
            if isinstance(op, Gather):
                j = i
                while j < len(ops) and isinstance(ops[j], Gather):
                    j += 1
                if j == len(ops) or not isinstance(ops[j], If) or self.merge is None:
                    raise ScheduleError("a gather must be followed by the owner's `if` merge.")
                steps.extend(self.merge(tuple(ops[i:j]), ops[j], env))  # type: ignore[arg-type]
                i = j + 1
                continue
            if isinstance(op, ForLoop):
                steps.extend(self.loop(op, env, self.handed_on(op, ops[i + 1 :], env)))
            else:
                steps.extend(self.op_steps(op, env, skip))
            i += 1
        return steps

    def op_steps(self, op: Op, env: dict[str, Expr], skip: Skip) -> list[Step]:
        builder = ExprBuilder(self.ctx)
        match op:
            case Load() | ExpandDims():
                return []
            case ForLoop():
                return self.loop(op, env, {})
            case If(cond=cond, body=body):
                inner = wrap(self.level(body, env, skip), self.owned(body), self.cb_map())
                stmt = IfCore(core_cond(cond, env), tuple(s.stmt for s in inner))
                return [Step(stmt, frozenset().union(*(s.reads for s in inner)))]
            case Store(value=v):
                cb = self.ctx.role_cb(v.name, "store")
                if self.ctx.write_cb(v.name) == cb and v.name not in self.loaded():
                    return []  # the producing op already wrote into the store buffer
                # a loaded tile stored as it is (`out[tile, :n] = x[tile, :]`): compute
                # copies it from the load buffer into the store buffer
                return [produce(cb, builder.value(v.name))]
            case Full(result=r) if self.ctx.write_cb(r.name) is None:
                return []
        results = op.results()
        if not results:
            return []
        out = self.ctx.write_cb(results[0].name)
        if out is None:
            return []
        return pushed(out, builder.op_expr(results[0].name), skip)

    def yields(self, loop: ForLoop, skip: Skip) -> list[Step]:
        """Copy each carried value's next block into its state buffer when it was
        computed elsewhere (it is also read by other ops of the iteration)."""
        steps = []
        for c in loop.carried:
            state = self.ctx.write_cb(c.init.name)
            if state is None:
                raise ScheduleError(f"carried value {c.init.name!r} has no state buffer.")
            if self.ctx.write_cb(c.next.name) != state:
                steps.extend(pushed(state, ExprBuilder(self.ctx).value(c.next.name), skip))
        return steps

    def handed_on(self, op: ForLoop, rest: tuple[Op, ...], env: dict[str, Expr]) -> Skip:
        """The state buffers of `op` that only the next loop of `rest` pops, as its
        carried inits, when that loop's own result is never read: `op` pushes its last
        block into them only where that loop runs (its trip count may be 0 on some
        cores, as the keys below the diagonal of the first query tile)."""
        nxt = next((o for o in rest if isinstance(o, ForLoop)), None)
        if nxt is None:
            return {}
        mine = {c.result.name for c in op.carried}
        inits = {c.init.name for c in nxt.carried}
        if not mine <= inits:
            return {}
        _, count = loop_var(nxt, env)
        if isinstance(count, Const) and count.value > 0:
            return {}
        runs = cmp(">", count, Const(0))
        return {
            cb: runs
            for c in unread_results(nxt, self.ctx.used)
            if c.init.name in mine and (cb := self.ctx.write_cb(c.init.name)) is not None
        }

    def loop(self, op: ForLoop, env: dict[str, Expr], handed: Skip) -> list[Step]:
        var, count = loop_var(op, env)
        body_env = {**env, op.index.name: var}
        owned = self.owned(op.body, op.carried)
        cb_of = self.cb_map()
        dead: Skip = {
            cb: None
            for c in unread_results(op, self.ctx.used)
            if (cb := self.ctx.write_cb(c.init.name)) is not None
        } | dict(handed)

        def body(skip: Skip) -> list[Step]:
            return wrap(self.level(op.body, body_env, skip) + self.yields(op, skip), owned, cb_of)

        steps: list[Step] = []
        if not isinstance(count, Const):
            # a per-core trip count (causal attention: it grows with the query tile)
            inner = body({})
            reads = frozenset().union(*(s.reads for s in inner))
            if not dead:
                steps.append(Step(Loop(var, count, tuple(s.stmt for s in inner)), reads))
                return steps
            steps.append(Step(Loop(var, count - 1, tuple(s.stmt for s in inner)), reads))
            last = body(dead)  # the peeled last iteration, on the cores that run one
            last_reads = frozenset().union(*(s.reads for s in last))
            guard = cmp(">", count, Const(0))
            steps.append(Step(IfCore(guard, tuple(s.stmt for s in last)), last_reads))
            return steps
        full = count.value - 1 if dead else count.value
        if full > 0:
            inner = body({})
            reads = frozenset().union(*(s.reads for s in inner))
            steps.append(Step(Loop(var, Const(full), tuple(s.stmt for s in inner)), reads))
        if dead and count.value > 0:
            steps.extend(body(dead))  # the peeled last iteration
        return steps


def pushed(cb: str, built: Built, skip: Skip) -> list[Step]:
    """`produce` into `cb`, unless `skip` says never, or under its condition."""
    if cb not in skip:
        return [produce(cb, built)]
    cond = skip[cb]
    if cond is None:
        return []
    step = produce(cb, built)
    return [Step(IfCore(cond, (step.stmt,)), step.reads)]
