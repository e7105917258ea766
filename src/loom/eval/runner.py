"""Run many cases: in this process (`jobs == 1`) or as Ray tasks (a local Ray started
on demand, one worker per job, or an existing cluster at `address`).

As Ray tasks, the cases are submitted longest first (`cases.expected_seconds`), so the
workers finish together rather than one of them starting a long case last. Each case's
rows are handed to `on_result` as soon as the case finishes, in completion
order; the caller sorts and writes them (results.csv is sorted, so it does not depend on
the order). A KeyboardInterrupt cancels the cases still queued or running and is
re-raised after the rows already delivered are safe with the caller; a local Ray started
here is always shut down.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loom.eval.cases import EvalCase, expected_seconds
from loom.eval.rows import ResultRow
from loom.eval.run import EvalOptions, run_case

OnResult = Callable[[EvalCase, tuple[ResultRow, ...]], None]


@dataclass(frozen=True)
class RunnerOptions:
    jobs: int = 1
    """1: in this process, without Ray; more: that many Ray workers (local Ray)."""
    address: str = ""
    """An existing Ray cluster (`ray://host:10001` or `auto`); empty: start a local one."""


def run_cases(
    cases: Sequence[EvalCase],
    options: EvalOptions,
    runner: RunnerOptions,
    on_result: OnResult,
) -> None:
    if not cases:
        return
    if runner.jobs <= 1 and not runner.address:
        for case in cases:
            on_result(case, run_case(case, options))
        return
    _run_on_ray(cases, options, runner, on_result)


def _task(case: EvalCase, options: EvalOptions) -> tuple[ResultRow, ...]:
    return run_case(case, options)


def _run_on_ray(
    cases: Sequence[EvalCase], options: EvalOptions, runner: RunnerOptions, on_result: OnResult
) -> None:
    import ray

    started = False
    if not ray.is_initialized():
        env = {"env_vars": {"OMP_NUM_THREADS": "1"}}
        if runner.address:
            ray.init(
                address=runner.address,
                runtime_env=env,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        else:
            ray.init(
                num_cpus=runner.jobs,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
                runtime_env=env,
            )
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(_task)
        # the longest first, so that the last case to start is a short one
        longest = sorted(cases, key=expected_seconds, reverse=True)
        pending = {remote.remote(case, options): case for case in longest}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    case = pending.pop(ref)
                    on_result(case, ray.get(ref))
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
