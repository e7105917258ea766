"""One CP-SAT model per candidate: build, solve, read the assignment (paper §2.6).

The three steps stay separate and inspectable: `build_model` returns the model (its
variables carry the Loom symbol names; `model_text` dumps it), `solve_problem` runs
CP-SAT with a fixed seed, one worker and a deterministic time limit — so the result does
not depend on the machine's load or on how many candidates run in parallel — and
reads the assignment back by symbol name.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from loom.ir.problem import Problem
from loom.ir.solution import Solution
from loom.solve.encode import Encoded, Encoder


@dataclass
class BuiltModel:
    model: cp_model.CpModel
    encoder: Encoder
    objective: Encoded


def build_model(
    problem: Problem, cutoff: int | None = None, floor: int | None = None
) -> BuiltModel:
    """The CP-SAT model of `problem`: `cutoff` (inclusive) bounds the objective from
    above; `floor`, a proven lower bound of the optimum (the table's exact minimum,
    `loom.solve.table.table_bound`), from below, so the search stops as soon as it
    reaches it instead of proving it (GEMM 16384³'s pick: 0.55 s -> 0.07 s)."""
    model = cp_model.CpModel()
    model.name = problem.candidate.name
    enc = Encoder(model, problem.domains)
    for con in problem.constraints:
        enc.enforce(con.cond)
    objective = enc.expr(problem.objective)
    if cutoff is not None:
        model.add(objective.var <= cutoff)
    if floor is not None:
        model.add(objective.var >= floor)
    model.minimize(objective.var)
    return BuiltModel(model, enc, objective)


def model_text(problem: Problem) -> str:
    """The CP-SAT model of a problem as protobuf text (for --dump-dir)."""
    return str(build_model(problem).model.Proto())


SMALL_MODEL_PARAMETERS = {
    "linearization_level": 0,
    "cp_model_probing_level": 0,
    "max_presolve_iterations": 1,
    "cp_model_use_sat_presolve": False,
    "use_sat_inprocessing": False,
    "symmetry_level": 0,
}
"""These models are small (a few symbols with a handful of legal values each). No LP
relaxation and no probing halve CP-SAT's CPU time against its defaults; one presolve pass
without SAT presolve, inprocessing or symmetry detection takes about a fifth to a quarter
more off on GEMM (no change on flash attention), with the same optima and assignments
(measured by benchmarks/solver_params.py)."""


def new_solver(deterministic_seconds: float = 10.0, tuned: bool = True) -> cp_model.CpSolver:
    """A CP-SAT solver with one worker and a fixed seed, so results depend neither on the
    machine's load nor on parallel solves; `tuned` applies SMALL_MODEL_PARAMETERS."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = deterministic_seconds
    if tuned:
        for name, value in SMALL_MODEL_PARAMETERS.items():
            setattr(solver.parameters, name, value)
    return solver


def solve_problem(
    problem: Problem,
    cutoff: int | None = None,
    deterministic_seconds: float = 10.0,
    lower_bound: int = 0,
    floor: int | None = None,
) -> Solution:
    """Minimise the candidate's latency; `cutoff` (inclusive) prunes what cannot win;
    `floor`: a proven lower bound of the optimum (`build_model`)."""
    name = problem.candidate.name
    if problem.infeasible_reason:
        return Solution(
            name, "infeasible", reason=problem.infeasible_reason, lower_bound=lower_bound
        )
    start = time.perf_counter()
    built = build_model(problem, cutoff, floor)
    solver = new_solver(deterministic_seconds)
    status = solver.Solve(built.model)
    seconds = time.perf_counter() - start
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        assignment = {n: solver.Value(built.encoder.value[n].var) for n in problem.domains}
        return Solution(
            candidate=name,
            status="optimal" if status == cp_model.OPTIMAL else "feasible",
            assignment=assignment,
            cycles=solver.Value(built.objective.var),
            l1_bytes=problem.l1_bytes.eval(assignment),
            dram_bytes=problem.dram_bytes.eval(assignment),
            lower_bound=lower_bound,
            seconds=seconds,
        )
    if status == cp_model.INFEASIBLE:
        if cutoff is not None:
            return Solution(
                name,
                "pruned",
                lower_bound=lower_bound,
                seconds=seconds,
                reason=f"cannot beat the incumbent ({cutoff} cycles)",
            )
        return Solution(
            name,
            "infeasible",
            lower_bound=lower_bound,
            seconds=seconds,
            reason=explain_infeasible(problem),
        )
    return Solution(
        name,
        "unknown",
        lower_bound=lower_bound,
        seconds=seconds,
        reason=f"CP-SAT status {solver.StatusName(status)} within the time limit",
    )


def explain_infeasible(problem: Problem) -> str:
    """The first constraint that no assignment satisfies on its own, in source terms."""
    import itertools

    from loom.symbolic.pyexpr import compile_expr

    for con in problem.constraints:
        names = sorted(con.cond.free_names())
        check = compile_expr(con.cond, names)
        if not any(
            check(*vals) for vals in itertools.product(*(problem.domains[n] for n in names))
        ):
            return f"no tile sizes satisfy: {con.text}"
    return "the constraints cannot hold together: " + "; ".join(c.text for c in problem.constraints)
