"""What several benchmark scripts share: forked workers, the published measurements'
folder, and how a shape is printed.

The scripts import it as a sibling (`from bench_util import ...`): a script run as
`python benchmarks/NAME.py` has its folder on `sys.path`, and the tests of
`tests/benchmarks` put it there.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

CALIBRATION = Path(__file__).resolve().parents[1].parent / "shared" / "calibration"
"""The published measurements (`../shared/calibration`, beside the repository)."""

T = TypeVar("T")

_TASK: Callable[[int], Any] | None = None
"""What forked workers run (inherited with everything it refers to, never pickled)."""


def _run_task(i: int) -> tuple[int, Any]:
    assert _TASK is not None
    return i, _TASK(i)


def forked_imap(
    task: Callable[[int], T], order: Iterable[int], jobs: int, fresh: bool = False
) -> Iterator[tuple[int, T]]:
    """(i, task(i)) for each i of `order`, handed out in that order to `jobs` forked
    workers where available and yielded as they finish; only the results are pickled.
    `fresh`: each worker serves one task and exits, so no task sees another's state."""
    global _TASK
    order = list(order)
    if jobs <= 1 or len(order) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from ((i, task(i)) for i in order)
        return
    _TASK = task
    try:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs, maxtasksperchild=1 if fresh else None) as pool:
            yield from pool.imap_unordered(_run_task, order)
    finally:
        _TASK = None


def forked_map(task: Callable[[int], T], n: int, jobs: int) -> list[T]:
    """[task(0), ..., task(n - 1)], on `jobs` forked workers where available."""
    results = dict(forked_imap(task, range(n), jobs))
    return [results[i] for i in range(n)]


def shape_text(shape: dict[str, int]) -> str:
    """A shape as the scripts print it: `M=2048,N=256,K=2048`."""
    return ",".join(f"{k}={v}" for k, v in shape.items())
