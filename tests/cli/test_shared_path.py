"""The CLI and `loom.compile` take one path through the stages: the same options, the
same compile function, the same schedule and artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loom
from loom.cli import main
from loom.flows import cached

SHAPE = {"M": 256, "N": 512, "K": 128}


def _timeless(name: str, text: str) -> str:
    """An artifact without the wall-clock seconds two runs never share."""
    if name.endswith(".json"):
        data = json.loads(text)
        if isinstance(data, dict):
            data.pop("compile_seconds", None)
        return json.dumps(data, sort_keys=True)
    if name.endswith(".log"):
        return ""  # the solver's log: wall times on every line
    return text


def test_cli_and_api_compile_through_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, object]] = []
    real = cached.compile_cached

    def spy(lazy, shape, make_options, cache, listener, formats=""):  # type: ignore[no-untyped-def]
        calls.append((lazy.source_file.name, make_options(dict(SHAPE))))
        return real(lazy, shape, make_options, cache, listener, formats)

    monkeypatch.setattr(cached, "compile_cached", spy)
    shape_text = ",".join(f"{k}={v}" for k, v in SHAPE.items())
    argv = ["compile", "gemm", "--shape", shape_text, "--jobs", "1", "--no-cache"]
    assert main([*argv, "--dump-dir", str(tmp_path / "cli")]) == 0
    capsys.readouterr()
    ck = loom.compile("gemm", shape=SHAPE, jobs=1)
    ck.save(tmp_path / "api")

    assert len(calls) == 2 and calls[0] == calls[1]  # the same options, one function
    cli_files = {p.name: p.read_text() for p in (tmp_path / "cli").iterdir()}
    api_files = {p.name: p.read_text() for p in (tmp_path / "api").iterdir()}
    cli_files.pop(".loom-artifacts")  # the CLI's marker of a folder it owns
    assert sorted(cli_files) == sorted(api_files)
    assert "schedule.json" in api_files and "kernel_ttlang.py" in api_files
    for name, text in cli_files.items():
        assert _timeless(name, text) == _timeless(name, api_files[name]), name
