"""A kernel run as several launches (hl.barrier phases reading other blocks' tiles) on
the command line: `compile` prints each launch and the modeled total; a schedule file
holds one launch, so `--schedule` is refused with a one-paragraph error."""

from __future__ import annotations

import re

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


def test_report_describes_every_launch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The page lists each launch and compares the simulator's time of the whole kernel
    with the model's time of the whole kernel (every launch and the barriers), not with
    the first launch alone."""
    path = str(EXAMPLES_DIR / "global_norm.py")
    page_file = tmp_path / "report.html"
    assert main(["simulate", path, "--jobs", "1", "--html", str(page_file)]) == 0
    page = page_file.read_text()
    match = re.search(
        r"Whole kernel modeled: ([\d,]+) \(global_norm\) \+ ([\d,]+) "
        r"\(global_norm_launch2\) \+ grid barriers ([\d,]+) = ([\d,]+) cycles",
        page,
    )
    assert match, "the why-section names no launches"
    first, second, barriers, total = (int(g.replace(",", "")) for g in match.groups())
    assert first > 0 and second > 0 and barriers > 0 and total == first + second + barriers
    assert 'id="launches"' in page
    assert f"modeled {total:,} cycles over all 2 launches" in page
    ratios = [float(r) for r in re.findall(r"simulated / modeled = ([\d.]+)", page)]
    assert ratios and all(0.8 < r < 1.25 for r in ratios), ratios
