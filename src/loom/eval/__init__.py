"""The paper's evaluation and general sweeps: cases, one case's rows, and the runner
(in-process or as Ray tasks). The only package that knows Ray."""

from __future__ import annotations

from loom.eval.cases import EvalCase, paper_cases, quick_cases
from loom.eval.rows import ResultRow, read_rows, rows_to_csv
from loom.eval.run import EvalOptions, run_case

__all__ = [
    "EvalCase",
    "EvalOptions",
    "ResultRow",
    "paper_cases",
    "quick_cases",
    "read_rows",
    "rows_to_csv",
    "run_case",
]
