"""Solve stage: one CP-SAT problem per candidate, ranked; the enumeration oracle."""

from loom.solve.bounds import core_bound, path_bound
from loom.solve.cpsat import build_model, model_text, solve_problem
from loom.solve.enumerate import enumerate_problem
from loom.solve.rank import Ranking, RankOptions, rank

__all__ = [
    "RankOptions",
    "Ranking",
    "build_model",
    "core_bound",
    "enumerate_problem",
    "model_text",
    "path_bound",
    "rank",
    "solve_problem",
]
