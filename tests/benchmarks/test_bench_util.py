"""The benchmarks' shared helpers (`benchmarks/bench_util.py`): forked workers return
results in order, whatever the number of workers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_util import forked_map


def test_forked_workers_return_results_in_order() -> None:
    # A closure over unpicklable state (a lambda): workers inherit it, only results return.
    scale = {"by": lambda i: 3 * i}
    want = [3 * i for i in range(7)]
    assert forked_map(lambda i: scale["by"](i), 7, jobs=2) == want
    assert forked_map(lambda i: scale["by"](i), 7, jobs=1) == want
