"""Solve stage: one CP-SAT problem per candidate, ranked; the enumeration oracle.

OR-Tools (and the pandas it imports) loads only when a CP-SAT model is built, so reading
a cached compile result does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom.solve.bounds import core_bound, path_bound
from loom.solve.rank import Ranking, RankOptions, rank

if TYPE_CHECKING:
    from loom.solve.cpsat import build_model, model_text, solve_problem
    from loom.solve.enumerate import enumerate_problem

_LAZY = {
    "build_model": "loom.solve.cpsat",
    "model_text": "loom.solve.cpsat",
    "solve_problem": "loom.solve.cpsat",
    "enumerate_problem": "loom.solve.enumerate",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'loom.solve' has no attribute {name!r}")


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
