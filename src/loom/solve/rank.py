"""Solve the candidates that can win and rank them; keep the top k.

Branch and bound. Candidates are visited in order of a cheap lower bound on their
modeled latency (`bounds.core_bound`); one whose bound exceeds the k-th best latency
known so far (the cutoff) is pruned without building its problem. So is one whose
class (`bounds.class_key`: the candidates that differ only in their copies' modes and
group areas) has a built member whose `bounds.class_bound` exceeds the cutoff: that
bound holds for every member, and it is much the tighter one where the stores or the
compute dominate, which `core_bound` underestimates. A built problem is
tabulated over its whole (small) domain (`table.table_bound`): the table's minimum is
the candidate's exact optimum under the model, so it tightens the cutoff at once and,
once every candidate is visited, prunes every candidate that cannot enter the top k.
Only the survivors become CP-SAT problems, each with its table's minimum as the
objective's lower bound (CP-SAT stops when it reaches it rather than proving it). The
true top k is never pruned.

Each problem is solved with an inclusive cutoff: the k-th best latency known when the
round of `ROUND` candidates (in bound order) in which it was first visited began. That
figure depends only on the order and on the candidates' optima — not on what a bound
pruned, nor on how many solves run in parallel — so CP-SAT's choice among assignments
of equal latency (the first it finds, which a cutoff can change) stays the same when a
pruning rule gets sharper, and every result and log line is deterministic. Candidates
whose problems are identical (the model does not tell apart, say, two factorizations of
a mesh dimension that give every axis the same cores and multicast groups) are solved
once. A problem too large to tabulate falls back to the compute-path bound
(`bounds.path_bound`) and is solved when visited.
"""

from __future__ import annotations

import dataclasses
from bisect import insort
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from loom.ir.candidate import Candidate
from loom.ir.problem import Problem
from loom.ir.solution import Solution
from loom.solve.bounds import class_bound, class_key, path_bound
from loom.solve.table import INFEASIBLE, Grid, table_bound

ROUND = 8
"""Candidates per round: a problem is solved with the cutoff known when the round in
which it was first visited began."""


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
    built: int = 0
    """Candidates whose problem was built (the others were pruned by their bound)."""
    solved: int = 0
    """Distinct problems handed to the solver (the others were pruned or shared one)."""


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
    """Branch and bound over the candidates (see the module docstring)."""
    search = _Search(bounds, options)
    for i, c in enumerate(sorted(candidates, key=lambda c: (bounds[c.name], c.name))):
        if i % ROUND == 0:
            search.round_limit = search.cutoff()
        search.visit(c, build)
    return search.finish(candidates)


class _Search:
    def __init__(self, bounds: dict[str, int], options: RankOptions) -> None:
        self.bounds = bounds
        self.options = options
        self.results: dict[str, Solution] = {}
        self.known: list[int] = []
        """Latencies candidates are known to reach (their optima), one per candidate."""
        self.exact: dict[tuple[object, ...], int | None] = {}
        self.path_bounds: dict[tuple[object, ...], int] = {}
        self.solved: dict[tuple[object, ...], Solution] = {}
        self.tabulated: list[tuple[Problem, int]] = []
        self.untabulated: list[Problem] = []
        self.built = 0
        self.round_limit: int | None = None
        """The cutoff when the current round of candidates started."""
        self.limits: dict[tuple[object, ...], int | None] = {}
        """The cutoff a problem is solved with: the round's, when it was first visited."""
        self.class_bounds: dict[tuple[object, ...], int] = {}
        """`class_bound` of each class with a built member."""
        self.grids: dict[object, Grid] = {}
        """The tables' grids, one per domain product (`table.table_bound`)."""

    def cutoff(self) -> int | None:
        k = self.options.top_k
        return self.known[k - 1] if len(self.known) >= k else None

    def solve(self, problem: Problem, limit: int | None, floor: int | None = None) -> Solution:
        """`floor`: a tabulated problem's exact optimum, CP-SAT's objective bound."""
        bound = self.bounds[problem.candidate.name]
        if self.options.solver == "enumerate":
            from loom.solve.enumerate import enumerate_problem

            return enumerate_problem(problem, limit, bound)
        from loom.solve.cpsat import solve_problem  # imports OR-Tools: only when solving

        seconds = self.options.deterministic_seconds
        return solve_problem(problem, limit, seconds, bound, floor)

    def prune(self, c: Candidate, bound: int, kind: str, limit: int | None) -> None:
        reason = f"{kind} bound {bound} > incumbent {limit}"
        self.results[c.name] = Solution(c.name, "pruned", lower_bound=bound, reason=reason)

    def visit(self, c: Candidate, build: Callable[[Candidate], Problem]) -> None:
        limit = self.cutoff()
        if limit is not None and self.bounds[c.name] > limit:
            self.prune(c, self.bounds[c.name], "cores", limit)
            return
        family = class_key(c)
        shared = self.class_bounds.get(family, 0)
        if limit is not None and shared > limit:
            self.prune(c, shared, "class", limit)
            return
        problem = build(c)
        self.built += 1
        if family not in self.class_bounds and not problem.infeasible_reason:
            self.class_bounds[family] = class_bound(problem)
        key = problem_key(problem)
        self.limits.setdefault(key, self.round_limit)
        if key not in self.exact:
            self.exact[key] = (
                None if problem.infeasible_reason else table_bound(problem, self.grids)
            )
        best = self.exact[key]
        if best is not None:
            if best < INFEASIBLE:
                insort(self.known, best)
            self.tabulated.append((problem, best))
            return
        # no table (a domain too large, or empty): the compute-path bound, then the
        # solver at once, so that the latency it finds tightens the cutoff
        if key not in self.path_bounds:
            self.path_bounds[key] = path_bound(problem)
        if limit is not None and self.path_bounds[key] > limit:
            self.prune(c, self.path_bounds[key], "compute-path", limit)
            return
        if key not in self.solved:
            self.solved[key] = self.solve(problem, self.limits[key])
        self.untabulated.append(problem)
        if self.solved[key].solved:
            insort(self.known, self.solved[key].cycles)

    def finish(self, candidates: tuple[Candidate, ...]) -> Ranking:
        """Prune by the tables against the final cutoff; solve the survivors."""
        limit = self.cutoff()
        survivors: list[Problem] = []
        for problem, best in self.tabulated:
            c = problem.candidate
            if best >= INFEASIBLE:
                self.results[c.name] = _infeasible(problem, self.bounds[c.name])
            elif limit is not None and best > limit:
                self.prune(c, best, "table", limit)
            else:
                survivors.append(problem)
        unique: dict[tuple[object, ...], Problem] = {}
        for p in survivors:
            unique.setdefault(problem_key(p), p)
        limits = [self.limits[key] for key in unique]
        floors = [self.exact[key] for key in unique]
        with ThreadPoolExecutor(max_workers=max(1, self.options.jobs)) as pool:
            solutions = list(pool.map(self.solve, unique.values(), limits, floors))
        self.solved.update(zip(unique, solutions, strict=True))
        kept: list[tuple[Solution, Problem]] = []
        for problem in (*self.untabulated, *survivors):
            name = problem.candidate.name
            shared = self.solved[problem_key(problem)]
            solution = dataclasses.replace(shared, candidate=name, lower_bound=self.bounds[name])
            self.results[name] = solution
            if solution.solved:
                kept.append((solution, problem))
        kept.sort(key=lambda sp: (sp[0].cycles, sp[0].dram_bytes, sp[0].candidate))
        return Ranking(
            tuple(self.results[c.name] for c in candidates),
            tuple(kept[: self.options.top_k]),
            built=self.built,
            solved=sum(1 for p in self.solved.values() if p.status != "infeasible" or p.seconds),
        )


def _infeasible(problem: Problem, bound: int) -> Solution:
    from loom.solve.cpsat import explain_infeasible

    reason = explain_infeasible(problem)
    return Solution(problem.candidate.name, "infeasible", lower_bound=bound, reason=reason)
