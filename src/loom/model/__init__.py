"""Model stage: the HEG, symbolic latency and constraints of each candidate -> Problem."""

from loom.model.build import build_problem, check_feasible

__all__ = ["build_problem", "check_feasible"]
