"""Solve stage: one CP-SAT problem per candidate, ranked; the enumeration oracle."""

from loom.solve.cpsat import build_model, model_text, solve_problem
from loom.solve.enumerate import enumerate_problem
from loom.solve.rank import RankOptions, Ranking, lower_bound, rank

__all__ = [
    "RankOptions",
    "Ranking",
    "build_model",
    "enumerate_problem",
    "lower_bound",
    "model_text",
    "rank",
    "solve_problem",
]
