"""The campaign of benchmarks/fuzz.py records every way a round can fail as a file and
goes on: a failure (shrunk), a flaky program (both outcomes kept), an error of the
harness itself; and it leaves no temporary folder behind. `check_program` is replaced
by a stand-in here, so no program is compiled."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .check import Outcome
from .grammar import Program
from .replay import load_program

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz.py"


@pytest.fixture(scope="module")
def campaign_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_campaign", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _round(
    module: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    check: Callable[[Program, Path], Outcome],
    max_shrinks: int = 60,
) -> Any:
    monkeypatch.setattr(module, "check_program", check)
    campaign = module.Campaign(tmp_path / "out", float("inf"), max_shrinks)
    work = campaign.work
    campaign.run_round(7, 5)  # returns: a failure never ends the campaign
    campaign.close()
    assert not work.exists()
    return campaign


def _files(campaign: Any) -> list[Path]:
    return [Path(f["file"]) for f in campaign.failures]


def test_a_flaky_program_is_written_with_both_outcomes(
    campaign_module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: set[Program] = set()

    def once(program: Program, workdir: Path) -> Outcome:  # fails the first time only
        first = program not in seen
        seen.add(program)
        return Outcome("crash", "Traceback: boom") if first else Outcome("pass")

    campaign = _round(campaign_module, tmp_path, monkeypatch, once)
    (path,) = _files(campaign)
    assert campaign.failures[0]["kind"] == "flaky"
    text = path.read_text()
    assert "run 1: crash: Traceback: boom" in text and "run 2: pass" in text
    assert load_program(path) in seen  # replayable


def test_a_failure_shrunk_to_the_budget_is_not_taken_for_a_flaky_one(
    campaign_module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def wrong(program: Program, workdir: Path) -> Outcome:
        return Outcome("wrong", "max abs 1.0")

    campaign = _round(campaign_module, tmp_path, monkeypatch, wrong, max_shrinks=2)
    assert [f["kind"] for f in campaign.failures] == ["wrong"]
    load_program(_files(campaign)[0])


def test_an_error_of_the_harness_is_written_with_its_program(
    campaign_module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(program: Program, workdir: Path) -> Outcome:
        raise RuntimeError("the harness broke")  # check_program itself never raises

    campaign = _round(campaign_module, tmp_path, monkeypatch, broken)
    assert [f["kind"] for f in campaign.failures] == ["harness"]
    (path,) = _files(campaign)
    assert "RuntimeError: the harness broke" in path.read_text()
    load_program(path)


def test_the_coverage_table_is_printed_from_a_summary(
    campaign_module: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "summary.json"
    coverage = {"tile load": 200, "unary exp": 3, "binary add": 3, "unary tanh": 1}
    summary.write_text(json.dumps({"programs": 200, "coverage": coverage}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["fuzz.py", "--table", str(summary)])
        campaign_module.main()
    assert capsys.readouterr().out.splitlines() == [
        "| construct | programs | share |",
        "| --- | ---: | ---: |",
        "| tile load | 200 | 100% |",
        "| binary add | 3 | 2% |",  # ties by name; 1.5% rounds to even
        "| unary exp | 3 | 2% |",
        "| unary tanh | 1 | 0% |",  # 0.5% rounds to even
    ]
