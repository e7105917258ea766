"""Split reductions: every core of a split sends its partials to the split's owner, and
the owner folds them as they arrive (flash decode's log-sum-exp merge).

Inside the owner's guard, ops on gathered values run once per partial. They form
*passes*: a pass is one sweep over the partials, and a reduction over the gathered axis
(a fold, whose accumulator is a state buffer) is only complete after its pass, so an op
that needs it runs in a later pass (the weights `exp(m_i - max)` need the max). Each
pass folds the owner's own partial first (it initialises the accumulators), then a loop
over the partials arriving from the other cores. A gathered value read in two passes is
simply sent twice; senders send, and the owner receives, in the same per-pass order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from loom.errors import ScheduleError
from loom.ir.program import (
    BlockRef,
    IfCore,
    Loop,
    PipeNet,
    ReceiveAll,
    ReceiveEach,
    Send,
    Stmt,
    Wait,
)
from loom.ir.tile import ExpandDims, Gather, If, Op, Reduce, Store
from loom.lower.compute import ComputeBuilder
from loom.lower.context import LowerContext
from loom.lower.exprs import Built, ExprBuilder
from loom.lower.loops import core_cond
from loom.lower.mesh import gather_pipes
from loom.lower.movement import Movement
from loom.lower.waits import Step, produce, wrap
from loom.symbolic import Cond, Const, Expr, Sym


@dataclass(frozen=True)
class MergePlan:
    gathers: tuple[Gather, ...]
    axis: str
    parts: int
    owner: Cond
    passes: tuple[tuple[Op, ...], ...]
    """Per-partial ops of each pass, in program order (folds included)."""
    between: tuple[tuple[Op, ...], ...]
    """Ops on whole values run before pass 1 (index 0) and after each pass k."""
    orders: tuple[tuple[str, ...], ...]
    """Gathered values each pass reads, in the order they are sent and received."""
    net: str

    def operand(self, gathered: str) -> str:
        return next(g.operand.name for g in self.gathers if g.result.name == gathered)


def is_fold(op: Op) -> TypeGuard[Reduce]:
    """A reduction over the gathered axis (axis 0 of a per-partial value)."""
    return isinstance(op, Reduce) and op.axis == 0


def _pass_of(
    names: list[str], pp: dict[str, int], ready: dict[str, int], gathered: set[str]
) -> int:
    """The pass of a per-partial op: after every fold it needs, with its per-partial
    operands (other than the re-sendable gathered values) from that same pass."""
    k = max([1] + [ready.get(n, 0) + 1 for n in names if n not in pp])
    k = max([k] + [pp[n] for n in names if n in pp and n not in gathered])
    if any(pp[n] != k for n in names if n in pp and n not in gathered):
        raise ScheduleError(
            "a per-partial value of the merge is needed by a later pass; only gathered "
            "values can be read again in a later pass."
        )
    return k


def _passes(
    ctx: LowerContext, gathers: tuple[Gather, ...], guard: If
) -> tuple[list[list[Op]], list[list[Op]]]:
    """Assign each op of the guard to a pass (per-partial ops) or to a gap between."""
    gathered = {g.result.name for g in gathers}
    pp: dict[str, int] = dict.fromkeys(gathered, 1)  # per-partial value -> its pass
    ready: dict[str, int] = {}  # whole value -> the pass after which it exists
    passes: list[list[Op]] = []
    between: list[list[Op]] = [[]]
    for op in guard.body:
        names = [v.name if v.name in pp else ctx.root(v.name) for v in op.operands()]
        if is_fold(op) and names[0] in pp:
            k = pp[names[0]]
            ready[op.results()[0].name] = k
        elif any(n in pp for n in names) and not isinstance(op, Store):
            k = _pass_of(names, pp, ready, gathered)
            pp.update(dict.fromkeys((r.name for r in op.results()), k))
            if isinstance(op, ExpandDims):
                continue
        else:
            k = max([0] + [ready.get(n, 0) for n in names])
            ready.update(dict.fromkeys((r.name for r in op.results()), k))
            between += [[] for _ in range(k + 1 - len(between))]
            between[k].append(op)
            continue
        passes += [[] for _ in range(k - len(passes))]
        passes[k - 1].append(op)
    between += [[] for _ in range(len(passes) + 1 - len(between))]
    return passes, between


def _order(ctx: LowerContext, ops: list[Op], gathered: set[str]) -> tuple[str, ...]:
    """Gathered values in the order the loop body of a pass first reads them."""
    order: list[str] = []
    builder = ExprBuilder(ctx)
    for op in ops:
        built = builder.fold(op, None) if is_fold(op) else None
        if built is None and ctx.write_cb(op.results()[0].name) is not None:
            built = builder.op_expr(op.results()[0].name)
        for key in sorted((built.reads if built else frozenset()) & gathered - set(order)):
            order.append(key)
    return tuple(order)


def plan_merge(
    ctx: LowerContext, gathers: tuple[Gather, ...], guard: If, env: dict[str, Expr]
) -> MergePlan:
    axes = {g.across for g in gathers}
    if len(axes) != 1:
        raise ScheduleError(f"gathers across several axes {sorted(axes)} are not supported.")
    axis = ctx.axis(axes.pop())
    if axis.waves != 1:
        raise ScheduleError(
            f"the split axis {axis.tile} runs in {axis.waves} waves; a split reduction needs "
            "all splits on cores at once (one wave)."
        )
    passes, between = _passes(ctx, gathers, guard)
    gathered = {g.result.name for g in gathers}
    orders = tuple(_order(ctx, ops, gathered) for ops in passes)
    return MergePlan(
        gathers,
        axis.tile,
        axis.factor,
        core_cond(guard.cond, env),
        tuple(map(tuple, passes)),
        tuple(map(tuple, between)),
        orders,
        f"gather_{axis.tile}",
    )


@dataclass
class Merge:
    ctx: LowerContext
    compute: ComputeBuilder
    movement: Movement

    def net(self, plan: MergePlan) -> None:
        if plan.parts > 1 and all(n.name != plan.net for n in self.movement.nets):
            pipes = gather_pipes(self.ctx.schedule.mapping, plan.axis)
            self.movement.nets.append(PipeNet(plan.net, "gather", pipes))

    # ----- compute -------------------------------------------------------------------
    def compute_steps(
        self, gathers: tuple[Gather, ...], guard: If, env: dict[str, Expr]
    ) -> list[Step]:
        plan = plan_merge(self.ctx, gathers, guard, env)
        self.net(plan)
        owner = wrap(self._owner_steps(plan, env), self._owner_keys(plan), self._cb_map(plan))
        if plan.parts == 1:
            return owner
        sender = self._sender_steps(plan)
        reads = frozenset().union(*(s.reads for s in [*owner, *sender]))
        stmt = IfCore(plan.owner, tuple(s.stmt for s in owner), tuple(s.stmt for s in sender))
        return [Step(stmt, reads)]

    def _cb_map(self, plan: MergePlan) -> dict[str, str]:
        cbs = self.compute.cb_map()
        for ops in plan.passes:
            for op in ops:
                if is_fold(op):
                    cbs[f"{op.results()[0].name}.acc"] = self._cb(op.result.name)
        return cbs

    def _cb(self, name: str) -> str:
        cb = self.ctx.write_cb(name)
        if cb is None:
            raise ScheduleError(f"merge value {name!r} has no buffer in the buffer plan.")
        return cb

    def _owner_keys(self, plan: MergePlan) -> set[str]:
        keys = {r.name for ops in plan.passes for op in ops for r in op.results()}
        keys |= {r.name for ops in plan.between for op in ops for r in op.results()}
        return keys

    def _owner_steps(self, plan: MergePlan, env: dict[str, Expr]) -> list[Step]:
        steps: list[Step] = []
        for k, gap in enumerate(plan.between):
            if k > 0:
                steps += self._local(plan, plan.passes[k - 1])
                if plan.parts > 1:
                    steps.append(self._arrivals(plan, k))
            for op in gap:
                steps += self.compute.op_steps(op, env, {})
        return steps

    def _instance(self, builder: ExprBuilder, ops: tuple[Op, ...], first: bool) -> list[Step]:
        steps = []
        for op in ops:
            name = op.results()[0].name
            if is_fold(op):
                acc = Built(BlockRef(self._cb(name)), frozenset((f"{name}.acc",)))
                steps.append(produce(self._cb(name), builder.fold(op, None if first else acc)))
            elif self.ctx.write_cb(name) is not None:
                steps.append(produce(self._cb(name), builder.op_expr(name)))
        return steps

    def _local(self, plan: MergePlan, ops: tuple[Op, ...]) -> list[Step]:
        """The owner's own partial: the gathered values are its own loop results."""
        bindings = {}
        for g in plan.gathers:
            own = self.ctx.root(g.operand.name)
            bindings[g.result.name] = Built(BlockRef(self._read_cb(own)), frozenset((own,)))
        return self._instance(ExprBuilder(self.ctx, bindings), ops, first=True)

    def _read_cb(self, name: str) -> str:
        cb = self.ctx.read_cb(name)
        if cb is None:
            raise ScheduleError(f"partial {name!r} has no buffer the compute engine reads.")
        return cb

    def _arrivals(self, plan: MergePlan, k: int) -> Step:
        """Fold the partials received from the other cores of the split."""
        ops = plan.passes[k - 1]
        body = self._instance(ExprBuilder(self.ctx), ops, first=False)
        owned = set(plan.orders[k - 1]) | {f"{op.results()[0].name}.acc" for op in ops}
        owned |= {op.results()[0].name for op in ops if not is_fold(op)}
        inner = wrap(body, owned, self._cb_map(plan))
        var = Sym(f"{plan.axis}_part{k}", 0, plan.parts - 2, 1, "index")
        loop = Loop(var, Const(plan.parts - 1), tuple(s.stmt for s in inner))
        return Step(loop, frozenset().union(*(s.reads for s in inner)))

    def _sender_steps(self, plan: MergePlan) -> list[Step]:
        steps = []
        for order in plan.orders:
            for gathered in order:
                own = self.ctx.root(plan.operand(gathered))
                out = self.ctx.role_cb(plan.operand(gathered), "gather_out")
                steps.append(produce(out, Built(BlockRef(self._read_cb(own)), frozenset((own,)))))
        return steps

    # ----- writer --------------------------------------------------------------------
    def writer_stmts(
        self, gathers: tuple[Gather, ...], guard: If, env: dict[str, Expr]
    ) -> tuple[Stmt, ...]:
        plan = plan_merge(self.ctx, gathers, guard, env)
        self.net(plan)
        owner: list[Stmt] = []
        for k, gap in enumerate(plan.between):
            if k > 0 and plan.parts > 1:
                cbs = tuple(self.ctx.role_cb(g, "gather_in") for g in plan.orders[k - 1])
                owner.append(
                    ReceiveAll(cbs[0], plan.net) if len(cbs) == 1 else ReceiveEach(cbs, plan.net)
                )
            for op in gap:
                owner.extend(self.movement.nested(op, env, "writer", self.writer_stmts))
        if plan.parts == 1:
            return tuple(owner)
        sender: list[Stmt] = []
        for order in plan.orders:
            for gathered in order:
                out = self.ctx.role_cb(plan.operand(gathered), "gather_out")
                sender.append(Wait((out,), (Send(out, plan.net),)))
        return (IfCore(plan.owner, tuple(owner), tuple(sender)),)
