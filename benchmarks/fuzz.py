"""Differential fuzzing campaign: random Helion programs for a given time (issue 43).

Runs rounds of the generator of tests/fuzz (hypothesis, one seed per round) through
tests/fuzz/check.py: compile on a random architecture variant, verify on tt-lang-sim
against Helion's interpret mode, check the model's L1 and core promises. A failing
program is shrunk by hypothesis and written to OUT/failures/case_<kernel>.py, a Helion
file that `loom verify FILE` runs and tests/fuzz/test_fuzz.py replays when copied to
tests/fuzz/regressions/. OUT/summary.json holds the counts (outcomes, refusals by
construct, constructs covered, seconds); OUT/log.txt one line per program.

    OMP_NUM_THREADS=1 PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/fuzz.py \\
        --minutes 60 --out fuzz-out [--programs 1000] [--seed 0] [--round 50]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, given, seed, settings

from fuzz.check import Outcome, check_program
from fuzz.coverage import constructs
from fuzz.grammar import Program
from fuzz.render import kernel_name, render
from fuzz.strategies import programs


class Campaign:
    """Counts and files of one campaign; `run_round` is one hypothesis run."""

    def __init__(self, out: Path, deadline: float, max_shrinks: int) -> None:
        self.out, self.deadline, self.max_shrinks = out, deadline, max_shrinks
        self._round_shrinks = 0
        self.work = Path(tempfile.mkdtemp(prefix="loom-fuzz-"))
        (out / "failures").mkdir(parents=True, exist_ok=True)
        self.log = (out / "log.txt").open("a")
        self.kinds: collections.Counter[str] = collections.Counter()
        self.refusals: collections.Counter[str] = collections.Counter()
        self.coverage: collections.Counter[str] = collections.Counter()
        self.shrink_runs = 0
        self.failures: list[dict[str, str]] = []
        self.seconds = 0.0
        self._shrinking = False
        self._last: tuple[Program, Outcome] | None = None

    def check(self, program: Program) -> None:
        if time.monotonic() > self.deadline or self._round_shrinks >= self.max_shrinks:
            return  # out of time, or shrunk enough: let hypothesis finish without work
        outcome = check_program(program, self.work)
        self.seconds += outcome.seconds
        if self._shrinking:
            self.shrink_runs += 1
            self._round_shrinks += 1
        else:
            self.kinds[outcome.kind] += 1
            self.coverage.update(constructs(program))
            if outcome.kind == "refused":
                self.refusals[outcome.construct] += 1
        name = kernel_name(program)
        self.log.write(f"{outcome.kind:10} {outcome.seconds:6.1f}s {name} {outcome.construct}\n")
        self.log.flush()
        if not outcome.good:
            self._shrinking = True
            self._last = (program, outcome)
            raise AssertionError(f"{outcome.kind}: {outcome.detail}")

    def run_round(self, round_seed: int, examples: int) -> None:
        self._shrinking, self._last, self._round_shrinks = False, None, 0

        @seed(round_seed)
        @settings(
            max_examples=examples, deadline=None, database=None, report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck), print_blob=False,
        )  # fmt: skip
        @given(program=programs())
        def one(program: Program) -> None:
            self.check(program)

        try:
            one()
        except AssertionError:
            assert self._last is not None
            self.write_failure(*self._last)

    def write_failure(self, program: Program, outcome: Outcome) -> None:
        name = kernel_name(program)
        path = self.out / "failures" / f"case_{name}.py"
        detail = "\n".join(f"# {line}" for line in outcome.detail.splitlines()[-30:])
        path.write_text(f"# fuzz outcome: {outcome.kind}\n{detail}\n{render(program)}")
        self.failures.append({"kind": outcome.kind, "file": str(path),
                              "detail": outcome.detail.splitlines()[-1][:300]})  # fmt: skip
        print(f"FAILURE {outcome.kind}: {path}", flush=True)

    def summary(self, wall: float, rounds: int) -> dict[str, object]:
        return {
            "programs": sum(self.kinds.values()),
            "outcomes": dict(self.kinds),
            "refusals_by_construct": dict(self.refusals),
            "shrink_runs": self.shrink_runs,
            "failures": self.failures,
            "rounds": rounds,
            "wall_seconds": round(wall, 1),
            "check_seconds": round(self.seconds, 1),
            "coverage": dict(sorted(self.coverage.items())),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument(
        "--programs", type=int, default=0, help="stop after this many programs (0: no limit)"
    )
    parser.add_argument("--out", type=Path, default=Path("fuzz-out"))
    parser.add_argument("--seed", type=int, default=0, help="seed of the first round")
    parser.add_argument("--round", type=int, default=50, help="programs per round")
    parser.add_argument(
        "--max-shrinks", type=int, default=60, help="runs spent shrinking one failure"
    )
    args = parser.parse_args()
    start = time.monotonic()
    campaign = Campaign(args.out, start + 60 * args.minutes, args.max_shrinks)
    rounds = 0
    while time.monotonic() < campaign.deadline:
        left = args.programs - sum(campaign.kinds.values()) if args.programs else args.round
        if left <= 0:
            break
        campaign.run_round(args.seed + rounds, min(args.round, left))
        rounds += 1
        summary = campaign.summary(time.monotonic() - start, rounds)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(f"round {rounds}: {summary['programs']} programs, {dict(campaign.kinds)}", flush=True)


if __name__ == "__main__":
    main()
