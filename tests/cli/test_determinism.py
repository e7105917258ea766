"""Determinism: the same command gives byte-identical output, whatever the run or `--jobs`.

Wall-clock figures are the only things allowed to differ, and they live in fields named
for it: `compile_seconds` in schedule.json and `timings` in the verify verdict and in the
simulation results.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from loom.cli import main

ARGV = ["run", "gemm", "--shape", "M=64,N=128,K=96", "--json", "--no-cache"]  # solve each time
TIMING = re.compile(r'("compile_seconds": )[0-9.e+-]+')


def _without_timings(data: dict) -> dict:  # type: ignore[type-arg]
    data = dict(data)
    data["schedule"] = {**data["schedule"], "compile_seconds": 0}
    for part in ("verify", "simulation"):
        data[part] = {k: v for k, v in data[part].items() if k != "timings"}
    return data


def test_runs_and_jobs_are_byte_identical(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    results = []
    for i, jobs in enumerate(("1", "1", "2")):
        dump = tmp_path / f"d{i}"
        assert main([*ARGV, "--jobs", jobs, "--dump-dir", str(dump)]) == 0
        out, _ = capsys.readouterr()
        files = {p.name: TIMING.sub(r"\g<1>0", p.read_text()) for p in sorted(dump.iterdir())}
        results.append((json.dumps(_without_timings(json.loads(out))), files))
    assert results[0] == results[1] == results[2]
    assert "timings" in json.loads(out)["verify"]
