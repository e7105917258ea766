"""Safe outputs and the error boundary: what Loom writes, replaces, and never touches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loom.arch import builtin_path
from loom.cli import main, outputs
from loom.errors import OutputError

G = ["gemm", "--shape", "M=64,N=64,K=64", "--jobs", "1"]


def run(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_dump_dir_rerun_replaces_only_what_loom_wrote(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "out" / "gemm"
    assert run(capsys, "compile", *G, "--dump-dir", str(dump))[0] == 0
    first = sorted(p.name for p in dump.iterdir())
    assert outputs.MARKER in first and "schedule.json" in first
    assert run(capsys, "compile", *G, "--dump-dir", str(dump))[0] == 0  # Loom's own: replaced
    assert sorted(p.name for p in dump.iterdir()) == first
    (dump / "my_notes.txt").write_text("mine")
    code, _, err = run(capsys, "compile", *G, "--dump-dir", str(dump))
    assert code == 1 and "my_notes.txt" in err and (dump / "my_notes.txt").exists()
    code, _, err = run(capsys, "compile", *G, "--dump-dir", str(dump), "--force")
    assert code == 0 and not (dump / "my_notes.txt").exists()
    leftovers = [p.name for p in dump.parent.iterdir() if p.name != "gemm"]
    assert leftovers == []  # no staging or old folder left beside the target


def test_force_overwrites_an_existing_trace(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = tmp_path / "t.json"
    trace.write_text("old")
    code, _, err = run(capsys, "simulate", *G, "--json", "--trace", str(trace))
    assert code == 1 and "already exists" in err and trace.read_text() == "old"
    code, _, _ = run(capsys, "simulate", *G, "--json", "--trace", str(trace), "--force")
    assert code == 0 and "traceEvents" in trace.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_write_dump_failure_keeps_the_old_folder(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "d"
    outputs.write_dump(str(dump), {"a.txt": "old"})
    real_rename = os.rename

    def failing(src, dst):  # type: ignore[no-untyped-def]
        if Path(dst) == dump and ".old." not in str(src):
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", failing)
    with pytest.raises(OSError):
        outputs.write_dump(str(dump), {"a.txt": "new"})
    assert (dump / "a.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_check_output_file_refuses_an_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "s.json"
    src.write_text("{}")
    with pytest.raises(OutputError, match="also an input"):
        outputs.check_output_file(str(src), "--trace", [str(src)], force=True)


def test_verify_with_a_custom_arch_file(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = builtin_path("wormhole_n150").read_text()
    arch = tmp_path / "custom.yaml"
    arch.write_text(text.replace("name: wormhole_n150", "name: custom_wh", 1))
    code, out, err = run(capsys, "verify", *G, "--arch", str(arch), "--json")
    data = json.loads(out)
    assert code == 0 and data["passed"], err
    assert "simulator_wall_seconds" in data["timings"]


def test_verify_removes_its_temporary_folder(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code, _, err = run(capsys, "verify", *G)
    assert code == 0, err
    assert list(tmp_path.iterdir()) == []


def test_run_json_includes_the_verify_verdict(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, "run", *G, "--json")
    data = json.loads(out)
    assert code == 0, err
    assert data["verify"]["passed"] is True and data["simulation"]["simulated_cycles"] > 0
    assert data["schedule"]["kernel"] == "gemm"


def test_version_comes_from_the_package_metadata(capsys) -> None:  # type: ignore[no-untyped-def]
    from importlib import metadata

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"loom {metadata.version('loom')}"


@pytest.mark.parametrize("which", ["schedule", "arch"])
def test_schema(capsys, which) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "schema", which)
    schema = json.loads(out)
    assert code == 0 and schema["type"] == "object" and schema["additionalProperties"] is False
    assert ("block_sizes" if which == "schedule" else "clock_ghz") in schema["properties"]


def test_internal_error_is_one_line_and_debug_shows_the_traceback(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from loom import cli

    def broken(args):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(cli.COMMANDS, "archs", broken)
    code, out, err = run(capsys, "archs")
    assert code == 3 and out == "" and "Traceback" not in err
    assert err.startswith("internal error: ZeroDivisionError") and "--debug" in err
    assert err.count("\n") == 1
    code, _, err = run(capsys, "archs", "--debug")
    assert code == 3 and "Traceback" in err


def test_closed_stdout_ends_quietly() -> None:
    script = (
        "import sys, os; from loom.cli import main; r, w = os.pipe(); os.close(r); "
        "os.dup2(w, 1); sys.exit(main(['schema', 'schedule']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 141 and proc.stderr == ""
