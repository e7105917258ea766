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
    .venv/bin/python benchmarks/fuzz.py --table fuzz-out/summary.json  # coverage table
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, given, seed, settings
from hypothesis.errors import Flaky

from fuzz.check import Outcome, check_program
from fuzz.coverage import constructs, coverage_table
from fuzz.grammar import Program
from fuzz.render import kernel_name, render
from fuzz.strategies import programs


class Campaign:
    """Counts and files of one campaign; `run_round` is one hypothesis run.

    Every way a round can fail is written as a file (`write_failure`) and the campaign
    goes on: a failing program (shrunk), a flaky one (it failed once and passed, or
    failed differently, when hypothesis replayed it: both outcomes are kept), and an
    error of the harness itself (with the program it was checking, if any)."""

    def __init__(self, out: Path, deadline: float, max_shrinks: int) -> None:
        self.out, self.deadline, self.max_shrinks = out, deadline, max_shrinks
        self._round_shrinks = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="loom-fuzz-")
        self.work = Path(self._tmp.name)
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
        self._current: Program | None = None
        self._latest: Program | None = None
        """The program of the last call: the one hypothesis replayed when it says flaky."""
        self._seen: dict[Program, list[Outcome]] = {}

    def close(self) -> None:
        """Remove the folder of rendered programs (the failures stay in OUT)."""
        self.log.close()
        self._tmp.cleanup()

    def check(self, program: Program) -> None:
        self._latest = program
        if time.monotonic() > self.deadline or self._round_shrinks >= self.max_shrinks:
            if failed := [o for o in self._seen.get(program, []) if not o.good]:
                self._last = (program, failed[-1])  # hypothesis replays a failure it saw:
                self._fail(failed[-1])  # as it was (not run again, so not taken for flaky)
            return  # out of time, or shrunk enough: let hypothesis finish without work
        shrinking, self._current = self._shrinking, program
        if shrinking:
            self.shrink_runs += 1
            self._round_shrinks += 1
        try:
            outcome = check_program(program, self.work)
            self._count(program, outcome, shrinking)
        except BaseException:
            self._shrinking = True  # hypothesis shrinks an error of the harness too
            raise
        self._current = None
        if not outcome.good:
            self._shrinking = True
            self._last = (program, outcome)
            self._fail(outcome)

    def _count(self, program: Program, outcome: Outcome, shrinking: bool) -> None:
        self._seen.setdefault(program, []).append(outcome)
        self.seconds += outcome.seconds
        if not shrinking:
            self.kinds[outcome.kind] += 1
            self.coverage.update(constructs(program))
            if outcome.kind == "refused":
                self.refusals[outcome.construct] += 1
        name = kernel_name(program)
        self.log.write(f"{outcome.kind:10} {outcome.seconds:6.1f}s {name} {outcome.construct}\n")
        self.log.flush()

    @staticmethod
    def _fail(outcome: Outcome) -> None:
        raise AssertionError(f"{outcome.kind}: {outcome.detail}")

    def run_round(self, round_seed: int, examples: int) -> None:
        self._shrinking, self._last, self._round_shrinks = False, None, 0
        self._current, self._latest, self._seen = None, None, {}

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
        except (Flaky, AssertionError) as err:
            if self._last is None:  # not raised by `check`: the harness's own
                self.harness_error(err, round_seed)
                return
            program, outcome = self._last
            if isinstance(err, Flaky) and self._latest is not None and self._latest in self._seen:
                program = self._latest
            runs = self._seen.get(program, [])
            if isinstance(err, Flaky) or len({o.kind for o in runs}) > 1:
                self.write_failure(program, _flaky(runs, err, outcome.kind))
            else:
                self.write_failure(program, outcome)
        except Exception as err:  # the harness itself (or hypothesis) failed: keep going
            self.harness_error(err, round_seed)

    def harness_error(self, err: BaseException, round_seed: int) -> None:
        """Write an error of the harness as a failure, with the program it was checking
        (replayable) or, without one, the round's seed."""
        why = "".join(traceback.format_exception(err))
        program = self._current or (self._last[0] if self._last else None)
        if program is not None:
            self.write_failure(program, Outcome("harness", why))
            return
        path = self.out / "failures" / f"harness_round_{round_seed}.txt"
        path.write_text(f"# fuzz outcome: harness (round seed {round_seed})\n{why}")
        self.failures.append({"kind": "harness", "file": str(path),
                              "detail": why.strip().splitlines()[-1][:300]})  # fmt: skip
        print(f"FAILURE harness: {path}", flush=True)

    def write_failure(self, program: Program, outcome: Outcome) -> None:
        name = kernel_name(program)
        path = self.out / "failures" / f"case_{name}.py"
        lines = outcome.detail.splitlines() or [""]
        keep = lines if outcome.kind in ("flaky", "harness") else lines[-30:]
        detail = "\n".join(f"# {line}" for line in keep)
        path.write_text(f"# fuzz outcome: {outcome.kind}\n{detail}\n{render(program)}")
        self.failures.append({"kind": outcome.kind, "file": str(path),
                              "detail": lines[-1][:300]})  # fmt: skip
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


def _flaky(runs: list[Outcome], err: BaseException, first: str) -> Outcome:
    """A program that failed once and passed, or failed differently, when run again:
    every outcome it had, then hypothesis's report."""
    lines = [f"run {i + 1}: {o.kind}: {o.detail}" for i, o in enumerate(runs)]
    lines.append("".join(traceback.format_exception(err)))
    return Outcome("flaky", "\n".join(lines), first)


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
    parser.add_argument(
        "--table",
        type=Path,
        metavar="SUMMARY",
        help="print the coverage table of docs/fuzzing.md from a campaign's summary.json, "
        "and run nothing",
    )
    args = parser.parse_args()
    if args.table:
        summary = json.loads(args.table.read_text())
        print(coverage_table(summary["coverage"], summary["programs"]))
        return
    start = time.monotonic()
    campaign = Campaign(args.out, start + 60 * args.minutes, args.max_shrinks)
    rounds, error = 0, ""
    try:
        while time.monotonic() < campaign.deadline:
            left = args.programs - sum(campaign.kinds.values()) if args.programs else args.round
            if left <= 0:
                break
            campaign.run_round(args.seed + rounds, min(args.round, left))
            rounds += 1
            summary = campaign.summary(time.monotonic() - start, rounds)
            (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
            kinds = dict(campaign.kinds)
            print(f"round {rounds}: {summary['programs']} programs, {kinds}", flush=True)
    except BaseException as err:  # an interrupt, or a harness error outside a round
        error = "".join(traceback.format_exception(err))
        raise
    finally:
        campaign.close()
        summary = campaign.summary(time.monotonic() - start, rounds)
        if error:
            summary["stopped_by"] = error
            print(f"campaign stopped after {rounds} rounds:\n{error}", file=sys.stderr)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
