"""Differential fuzzing (issue 43): random Helion programs compile and verify on
tt-lang-sim against Helion's interpret mode, or are refused by name, and keep the model's
promises (see tests/fuzz/check.py for every outcome).

A fixed-seed sample runs in the default suite; 1,000 programs in the `slow` suite
(`pytest -m slow tests/fuzz`). benchmarks/fuzz.py runs for a given time and writes every
failing program, shrunk, as a file; the ones that found bugs live in
tests/fuzz/regressions/ and are replayed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from .check import check_program
from .coverage import constructs
from .grammar import Program
from .render import render
from .replay import load_program
from .strategies import ARCH_GRIDS, programs

REGRESSIONS = sorted((Path(__file__).parent / "regressions").glob("case_*.py"))
COMMON = {
    "deadline": None,
    "database": None,
    "derandomize": True,
    "report_multiple_bugs": False,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _check(program: Program, workdir: Path) -> None:
    outcome = check_program(program, workdir)
    assert outcome.good, f"{outcome.kind}: {outcome.detail}\n\n{render(program)}"


@settings(max_examples=5, **COMMON)  # type: ignore[arg-type]
@given(program=programs(depth=2))
def test_fuzzed_sample(program: Program, workdir: Path) -> None:
    _check(program, workdir)


@pytest.mark.slow
@settings(max_examples=1000, **COMMON)  # type: ignore[arg-type]
@given(program=programs())
def test_fuzzed_many(program: Program, workdir: Path) -> None:
    _check(program, workdir)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_regression(path: Path, workdir: Path) -> None:
    """Every program the fuzzer found a bug with, shrunk, now passes (or is refused by
    name, as the docs say)."""
    _check(load_program(path), workdir)


def test_rendering_is_deterministic_valid_python_and_replayable(tmp_path: Path) -> None:
    @settings(max_examples=200, **COMMON)  # type: ignore[arg-type]
    @given(program=programs())
    def one(program: Program) -> None:
        text = render(program)
        assert text == render(program)
        ast.parse(text)
        path = tmp_path / "case.py"
        path.write_text(text)
        assert load_program(path) == program

    one()


def test_a_sample_reaches_every_family() -> None:
    seen: set[str] = set()

    @settings(max_examples=300, **COMMON)  # type: ignore[arg-type]
    @given(program=programs())
    def one(program: Program) -> None:
        seen.update(constructs(program))

    one()
    families = ("2-D grid", "full-row slice", "column slice", "inner hl.tile loop")
    for name in (*families, "leading slice", "matmul", "refused: cumsum", "argmax", "mask"):
        assert any(name in s for s in seen), (name, sorted(seen))


def test_arch_grids_match_the_builtin_descriptions() -> None:
    from loom.arch import load_arch

    for name, (gy, gx) in ARCH_GRIDS.items():
        arch = load_arch(name)
        assert (arch.grid_y, arch.grid_x) == (gy, gx)
