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
    assert code == 1 and "task.dm_lanes: Input should be 1 or 2" in err


def test_malformed_define_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "examples/cuda/syrk.cu", "--define", "N"]) == 2
    assert "--define 'N': write NAME=VALUE" in capsys.readouterr().err


def _checkpoint(tmp_path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def, type-arg]
    import json

    folder = tmp_path / "d"
    args = ["compile", "examples/cuda/jacobi_2d.cu", "--define", "N=64", "--define", "TSTEPS=2"]
    args += list(extra)
    assert main([*args, "--stop-after", "tileflow", "--dump-dir", str(folder)]) == 0
    capsys.readouterr()
    path = folder / "tileflow.json"
    return str(path), json.loads(path.read_text())


def test_a_checkpoint_resumes_with_edited_later_policies(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    path, data = _checkpoint(tmp_path, capsys)
    assert main(["compile", "--resume", path]) == 0
    plain = capsys.readouterr().out
    assert "physical @jacobi_2d" in plain and "tileplan @" in plain
    data["annotations"]["task"]["dm_lanes"] = 2
    with open(path, "w") as f:
        json.dump(data, f)
    assert main(["compile", "--resume", path, "--stop-after", "task"]) == 0
    out = capsys.readouterr().out
    assert "DM1 delivers" in out and "physical @" not in out


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (
            lambda d: d["annotations"]["tileplan"].update(interchange=True),
            "already applied",
        ),
        (lambda d: d["annotations"]["task"].update(dm_lanes=3), "annotations.task.dm_lanes"),
        (lambda d: d["annotations"]["tileplan"].update(predicates="all"), "already applied"),
        (lambda d: d.update(checkpoint=d["checkpoint"].replace("halo", "tile")), "does not match"),
        (lambda d: d.update(source_sha256="0" * 64), "changed since"),
        (lambda d: d.update(stage="lowered"), "stage"),
    ],
)
def test_an_edited_illegal_checkpoint_is_rejected_with_its_reason(  # type: ignore[no-untyped-def]
    tmp_path, capsys, edit, reason
) -> None:
    import json

    path, data = _checkpoint(tmp_path, capsys)
    edit(data)
    with open(path, "w") as f:
        json.dump(data, f)
    assert main(["compile", "--resume", path]) != 0
    err = capsys.readouterr().err
    assert reason in err and "Traceback" not in err


def test_row_streaming_edited_into_a_sender_halo_checkpoint_is_rejected(  # type: ignore[no-untyped-def]
    tmp_path, capsys
) -> None:
    """A tileflow checkpoint with sender-side halo conversion: row streaming, edited in
    at the task stage, is rejected by the seed's rule."""
    import json

    ann = tmp_path / "sender.yaml"
    ann.write_text("tileflow: {halo_conversion: sender}\n")
    path, data = _checkpoint(tmp_path, capsys, "--annotations", str(ann))
    data["annotations"]["task"]["streaming"] = "row"
    with open(path, "w") as f:
        json.dump(data, f)
    assert main(["compile", "--resume", path]) != 0
    err = capsys.readouterr().err
    assert "streaming=row is illegal" in err and "compute -> DM -> compute" in err
