"""`loom compile|verify|simulate|policies file.cu`."""

from __future__ import annotations

import pytest

from loom.cli import main


def test_compile_stops_after_the_named_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["compile", "examples/cuda/gaussian.cu", "--define", "N=64", "--stop-after", "tileflow"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "tileplan @gaussian" in out and "tileflow @gaussian" in out and "task @" not in out


def test_run_verifies_and_simulates(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "examples/cuda/syrk.cu",
            "--arch",
            "blackhole_p150_13x10",
            "--define",
            "N=64",
            "--define",
            "M=64",
            "--precision",
            "bf16",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "verify      PASS on tt-lang-sim" in out and "simulate    " in out


def test_policies_names_each_ranked_policy(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "policies",
            "examples/cuda/syrk.cu",
            "--arch",
            "blackhole_p150_13x10",
            "--define",
            "N=64",
            "--define",
            "M=128",
            "--top",
            "3",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[0].startswith("policies of examples/cuda/syrk.cu: 24 legal")
    assert len([ln for ln in out if ln.strip()[:1].isdigit()]) == 3


def test_bad_annotations_file_exits_with_the_reason(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    ann = tmp_path / "a.yaml"
    ann.write_text("task: {dm_lanes: 3}\n")
    code = main(["compile", "examples/cuda/jacobi_2d.cu", "--annotations", str(ann)])
    err = capsys.readouterr().err
    assert code == 2 and "task.dm_lanes: Input should be 1 or 2" in err


def test_malformed_define_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "examples/cuda/syrk.cu", "--define", "N"]) == 2
    assert "--define 'N': write NAME=VALUE" in capsys.readouterr().err
