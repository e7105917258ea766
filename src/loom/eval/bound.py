"""A lower bound on a lowered program's simulated cycles, without simulating it: the
launch cost plus the busiest core's compute-engine busy cycles.

The simulator runs each core's compute stream as one sequential process that is busy
for exactly its Compute statements' costs (`loom.sim.compute_cost.CostModel`, read here
with the options `simulate` uses by default) and waits for everything else, so that
stream finishes no earlier than the sum of the costs it executes, and the simulated
total is the last engine's finish plus the launch cost. The sum is taken over the
statements each core executes: loop trip counts and core branches evaluated as the
interpreter evaluates them, a loop whose body reads no loop variable of its own counted
once and multiplied. The tuned searches use it to skip candidates that cannot win
(`loom.eval.tuned`); tests/eval/test_bound.py checks it never exceeds the simulation.
"""

from __future__ import annotations

from loom.arch import Arch
from loom.errors import SimulationError
from loom.ir.program import Compute, IfCore, Loop, Parallel, Program, Reserve, Stmt, Wait
from loom.sim.compute_cost import CostModel
from loom.sim.params import from_arch
from loom.symbolic import SymbolicError

_ROUNDING = 1e-9
"""Relative slack for the simulator's clock adding the same delays in floating point."""


def compute_bound(program: Program, arch: Arch) -> float:
    """Cycles the simulation of `program` on `arch` takes at least (module docstring);
    0 when the program's costs or trip counts cannot be read (the simulation will say
    why), which leaves the candidate to be simulated."""
    params = from_arch(arch)
    walk = _Walk(CostModel(arch, params, program, packer_l1_acc=True))
    rows, cols = program.grid
    try:
        busiest = max(
            walk.cost(program.compute, {"core_y": y, "core_x": x})
            for y in range(rows)
            for x in range(cols)
        )
    except (SimulationError, SymbolicError):
        return 0.0
    return (busiest + params.launch_cycles) * (1.0 - _ROUNDING)


class _Walk:
    """Compute cycles of statement lists, memoised by the values of the names they read."""

    def __init__(self, costs: CostModel) -> None:
        self.costs = costs
        self._reads: dict[int, tuple[tuple[Stmt, ...], tuple[str, ...]]] = {}
        self._memo: dict[tuple[int, tuple[int | None, ...]], float] = {}

    def reads(self, stmts: tuple[Stmt, ...]) -> tuple[str, ...]:
        """The names the control flow of `stmts` reads (trip counts, branch conditions),
        less the variables of loops inside it."""
        hit = self._reads.get(id(stmts))
        if hit is None:
            names: set[str] = set()
            for s in stmts:
                match s:
                    case Loop(var=var, count=count, body=body):
                        names |= count.free_names()
                        names |= set(self.reads(body)) - {var.name}
                    case IfCore(cond=cond, then=then, orelse=orelse):
                        names |= cond.free_names() | set(self.reads(then) + self.reads(orelse))
                    case Reserve(body=body) | Wait(body=body):
                        names |= set(self.reads(body))
                    case Parallel(copies=copies):
                        names |= set(self.reads(copies))
            hit = self._reads[id(stmts)] = (stmts, tuple(sorted(names)))
        return hit[1]

    def cost(self, stmts: tuple[Stmt, ...], env: dict[str, int]) -> float:
        key = (id(stmts), tuple(env.get(n) for n in self.reads(stmts)))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._cost(stmts, env)
        return hit

    def _cost(self, stmts: tuple[Stmt, ...], env: dict[str, int]) -> float:
        total = 0.0
        for s in stmts:
            match s:
                case Compute():
                    total += self.costs.cost(s).cycles
                case Loop(var=var, count=count, body=body):
                    total += self._loop(var.name, count.eval(env), body, env)
                case IfCore(cond=cond, then=then, orelse=orelse):
                    total += self.cost(then if cond.eval(env) else orelse, env)
                case Reserve(body=body) | Wait(body=body):
                    total += self.cost(body, env)
                case Parallel(copies=copies):
                    total += self.cost(copies, env)
        return total

    def _loop(self, var: str, n: int, body: tuple[Stmt, ...], env: dict[str, int]) -> float:
        if n <= 0:
            return 0.0
        outer = env.get(var)
        if var not in self.reads(body):
            env.pop(var, None)
            total = n * self.cost(body, env)
        else:
            total = 0.0
            for i in range(n):
                env[var] = i
                total += self.cost(body, env)
        if outer is None:
            env.pop(var, None)
        else:
            env[var] = outer
        return total
