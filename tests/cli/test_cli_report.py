"""`--html`, `loom explain`, progress and the warm path that needs neither Helion nor torch."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

from loom.cli import main

GEMM = ["gemm", "--arch", "wormhole_n150", "--shape", "M=256,N=512,K=128", "--jobs", "1"]


def test_explain_prints_sentences_with_the_candidate(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["explain", *GEMM]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\nWhy:") and "Loom chose candidate gemm__" in out
    assert "Binding path of the latency graph" in out and "Modeled time" in out


def test_compile_html_writes_one_page(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "sub" / "r.html"
    assert main(["compile", *GEMM, "--html", str(page), "--explain"]) == 0
    out = capsys.readouterr().out
    assert f"report      {page}" in out and "Why:" in out
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "Not simulated" in text
    assert [p.name for p in page.parent.iterdir()] == ["r.html"]  # no temp file, no trace


def test_html_with_schedule_input_is_a_clear_error(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert main(["compile", *GEMM, "--json"]) == 0
    schedule = tmp_path / "s.json"
    schedule.write_text(capsys.readouterr().out)
    code = main(["simulate", "--schedule", str(schedule), "--html", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code != 0 and "--html needs a compile" in err and "Traceback" not in err


def test_warm_compile_imports_neither_helion_nor_torch(tmp_path: Path) -> None:
    env = {**os.environ, "LOOM_CACHE_DIR": str(tmp_path)}
    os.environ["LOOM_CACHE_DIR"], old = str(tmp_path), os.environ["LOOM_CACHE_DIR"]
    try:
        assert main(["compile", *GEMM, "--quiet"]) == 0  # traces and fills the cache
    finally:
        os.environ["LOOM_CACHE_DIR"] = old
    assert len(list(tmp_path.glob("*.pickle"))) == 2  # the trace and the compile result
    assert len(list(tmp_path.glob("compile-*.pickle"))) == 1
    probe = (
        "import sys; from loom.cli import main; code = main(sys.argv[1:]); "
        "print(code, *(m in sys.modules for m in ('helion', 'torch', 'ortools')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "compile", *GEMM],
        env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.stdout.splitlines()[-1] == "0 False False False", done.stderr[-2000:]
    assert "gemm__" in done.stdout and "compile result reused" in done.stdout


def test_no_cache_compiles_again(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    os.environ["LOOM_CACHE_DIR"], old = str(tmp_path), os.environ["LOOM_CACHE_DIR"]
    try:
        assert main(["compile", *GEMM]) == 0
        first = capsys.readouterr().out
        assert main(["compile", *GEMM]) == 0
        again = capsys.readouterr().out
        assert main(["compile", *GEMM, "--no-cache"]) == 0
        fresh = capsys.readouterr().out
    finally:
        os.environ["LOOM_CACHE_DIR"] = old
    assert "compile result reused" not in first and "compile result reused" in again
    assert "compile result reused" not in fresh

    # the same schedule either way (the compile-time line aside)
    def schedule(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith(("compile", "cache"))]

    assert schedule(first) == schedule(again) == schedule(fresh)


def test_progress_lines_for_slow_stages_only() -> None:
    from rich.console import Console

    from loom.cli.console import StageProgress

    buf = io.StringIO()
    progress = StageProgress(Console(file=buf, force_terminal=True, width=100))
    progress.started("model+solve", "solving 12 candidates")
    progress.finished("model+solve", 1.4)
    progress.started("lower", "")
    progress.finished("lower", 0.01)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())  # drop terminal codes
    assert "✓ solving 12 candidates" in text and "1.4 s" in text
    assert "✓ lowering" not in text  # a fast stage leaves no line behind


def test_no_progress_when_not_a_terminal(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["compile", *GEMM]) == 0
    assert capsys.readouterr().err == ""


def test_unwritable_report_path_is_a_clear_error(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["compile", *GEMM, "--html", str(blocker / "r.html")])
    err = capsys.readouterr().err
    assert code != 0 and "cannot be created" in err and "Traceback" not in err
    assert blocker.read_text() == "x"
