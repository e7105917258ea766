"""Solve every candidate and rank them; keep the top k.

Candidates are visited in order of a cheap lower bound on their modeled latency
(`bounds.core_bound`), and each solve gets the current k-th best latency as an
inclusive cutoff. A candidate whose bound exceeds the cutoff is pruned without building
its problem; one whose compute-path bound (`bounds.path_bound`) exceeds it is pruned
without solving it.
The true top k is never pruned. Candidates are solved in rounds of a fixed size (the
cutoff is updated between rounds), so what is solved and pruned — and therefore every
result and log line — does not depend on how many run in parallel. Candidates whose
problems are identical (the model does not tell apart, say, two factorizations of a mesh
dimension that give every axis the same cores and multicast groups) are solved once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from loom.ir.candidate import Candidate
from loom.ir.problem import Problem
from loom.ir.solution import Solution
from loom.solve.bounds import path_bound

ROUND = 8
"""Candidates solved between two cutoff updates (independent of the number of jobs)."""


@dataclass(frozen=True)
class RankOptions:
    top_k: int = 5
    jobs: int = 1
    solver: str = "cpsat"  # "cpsat" | "enumerate"
    deterministic_seconds: float = 10.0


@dataclass(frozen=True)
class Ranking:
    solutions: tuple[Solution, ...]
    """One per candidate, in candidate order."""
    top: tuple[tuple[Solution, Problem], ...]
    """The best k solved candidates, best first (ties: less DRAM traffic, then name)."""


def problem_key(p: Problem) -> tuple[object, ...]:
    """Structural identity of a problem: equal keys have equal solutions."""
    return (
        p.objective.key,
        p.l1_bytes.key,
        p.dram_bytes.key,
        tuple(c.cond.key for c in p.constraints),
        tuple(sorted(p.domains.items())),
        p.infeasible_reason,
    )


def rank(
    candidates: tuple[Candidate, ...],
    bounds: dict[str, int],
    build: Callable[[Candidate], Problem],
    options: RankOptions,
) -> Ranking:
    order = sorted(candidates, key=lambda c: (bounds[c.name], c.name))
    results: dict[str, Solution] = {}
    kept: list[tuple[Solution, Problem]] = []

    def cutoff() -> int | None:
        return kept[options.top_k - 1][0].cycles if len(kept) >= options.top_k else None

    solved_keys: dict[tuple[object, ...], Solution] = {}

    def solve(problem: Problem, limit: int | None) -> Solution:
        name = problem.candidate.name
        if options.solver == "enumerate":
            from loom.solve.enumerate import enumerate_problem

            return enumerate_problem(problem, limit, bounds[name])
        from loom.solve.cpsat import solve_problem  # imports OR-Tools: only when solving

        return solve_problem(problem, limit, options.deterministic_seconds, bounds[name])

    path_bounds: dict[tuple[object, ...], int] = {}

    def pruned(c: Candidate, bound: int, kind: str, limit: int | None) -> Solution:
        return Solution(
            c.name, "pruned", lower_bound=bound, reason=f"{kind} bound {bound} > incumbent {limit}"
        )

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for start in range(0, len(order), ROUND):
            limit = cutoff()
            group = order[start : start + ROUND]
            problems = []
            for c in group:
                if limit is not None and bounds[c.name] > limit:
                    results[c.name] = pruned(c, bounds[c.name], "cores", limit)
                    continue
                problem = build(c)
                key = problem_key(problem)
                if key not in path_bounds:
                    path_bounds[key] = path_bound(problem)
                if limit is not None and path_bounds[key] > limit:
                    results[c.name] = pruned(c, path_bounds[key], "compute-path", limit)
                    continue
                problems.append(problem)
            unique: dict[tuple[object, ...], Problem] = {}
            for p in problems:
                key = problem_key(p)
                if key not in solved_keys:
                    unique.setdefault(key, p)
            solutions = pool.map(solve, unique.values(), [limit] * len(unique))
            fresh = dict(zip(unique, solutions, strict=True))
            solved_keys.update(fresh)
            for problem in problems:
                shared = solved_keys[problem_key(problem)]
                solution = dataclasses.replace(
                    shared,
                    candidate=problem.candidate.name,
                    lower_bound=bounds[problem.candidate.name],
                )
                results[solution.candidate] = solution
                if solution.solved:
                    kept.append((solution, problem))
            kept.sort(key=lambda sp: (sp[0].cycles, sp[0].dram_bytes, sp[0].candidate))
            del kept[options.top_k :]
    return Ranking(tuple(results[c.name] for c in candidates), tuple(kept))
