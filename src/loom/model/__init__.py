"""Model stage: the HEG, symbolic latency and constraints of each candidate -> Problem."""

from loom.model.build import build_problem

__all__ = ["build_problem"]
