"""Solve stage: one CP-SAT problem per candidate, ranked; the enumeration oracle."""

from loom.solve.cpsat import build_model, model_text, solve_problem
from loom.solve.enumerate import enumerate_problem
from loom.solve.bounds import core_bound, path_bound
from loom.solve.rank import RankOptions, Ranking, rank

__all__ = [
    "RankOptions",
    "Ranking",
    "build_model",
    "enumerate_problem",
    "core_bound",
    "path_bound",
    "model_text",
    "rank",
    "solve_problem",
]
