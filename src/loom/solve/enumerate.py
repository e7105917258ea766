"""Exhaustive enumeration oracle: every legal assignment of every symbol, evaluated.

It evaluates the very same objective and constraint expressions as the CP-SAT model
(compiled to Python), so on small problems it tells whether CP-SAT found the true
optimum of the model. Also available as `loom compile --solver enumerate`.
"""

from __future__ import annotations

import itertools
import time

from loom.ir.problem import Problem
from loom.ir.solution import Solution
from loom.symbolic.pyexpr import compile_expr


def enumerate_problem(
    problem: Problem, cutoff: int | None = None, lower_bound: int = 0
) -> Solution:
    name = problem.candidate.name
    if problem.infeasible_reason:
        return Solution(
            name, "infeasible", reason=problem.infeasible_reason, lower_bound=lower_bound
        )
    start = time.perf_counter()
    names = list(problem.domains)
    objective = compile_expr(problem.objective, names)
    l1 = compile_expr(problem.l1_bytes, names)
    traffic = compile_expr(problem.dram_bytes, names)
    checks = [compile_expr(c.cond, names) for c in problem.constraints]
    best: tuple[int, tuple[int, ...]] | None = None
    for values in itertools.product(*(problem.domains[n] for n in names)):
        if all(check(*values) for check in checks):
            cycles = objective(*values)
            if best is None or cycles < best[0]:
                best = (cycles, values)
    seconds = time.perf_counter() - start
    if best is None:
        from loom.solve.cpsat import explain_infeasible

        return Solution(name, "infeasible", reason=explain_infeasible(problem), seconds=seconds)
    cycles, values = best
    if cutoff is not None and cycles > cutoff:
        return Solution(
            name,
            "pruned",
            lower_bound=lower_bound,
            seconds=seconds,
            reason=f"cannot beat the incumbent ({cutoff} cycles)",
        )
    return Solution(
        candidate=name,
        status="optimal",
        assignment=dict(zip(names, values, strict=True)),
        cycles=int(cycles),
        l1_bytes=int(l1(*values)),
        dram_bytes=int(traffic(*values)),
        lower_bound=lower_bound,
        seconds=seconds,
    )
