"""A kernel run as several launches (hl.barrier phases reading other blocks' tiles) on
the command line: `compile` prints each launch and the modeled total; a schedule file
holds one launch, so `--schedule` is refused with a one-paragraph error."""

from __future__ import annotations

from loom.cli import main
from loom.kernels.examples import EXAMPLES_DIR


def test_compile_prints_the_launches_and_schedule_files_are_refused(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(EXAMPLES_DIR / "global_norm.py")
    dump = tmp_path / "dump"
    assert main(["compile", path, "--jobs", "1", "--dump-dir", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "-- next launch, after a grid-wide barrier (hl.barrier) --" in out
    assert "launches    2 (global_norm, global_norm_launch2): modeled " in out
    assert "+ grid barrier " in out
    assert (dump / "global_norm_launch2.kernel_ttlang.py").is_file()
    code = main(["verify", path, "--schedule", str(dump / "schedule.json")])
    _, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in err
    assert "runs as 2 launches" in err and "compile the kernel instead" in err
