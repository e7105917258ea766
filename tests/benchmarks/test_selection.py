"""The judge (`benchmarks/selection.py`): its TTNN summary (the set's fastest against
TTNN's tuned configuration is TTNN's time over the best simulated one, from judged sets
only) and its cases run side by side (printed and recorded in case order, whatever the
number of workers)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import selection
from selection import CaseOutcome, CaseResult, judge, summarize_ttnn


def case(arch: str, size: int, regret: float, vs_ttnn: float) -> CaseResult:
    return CaseResult("gemm", arch, "M=1,N=1,K=1", size, 1.0, 1.0, 1, regret, "", 0.0, 0.9, vs_ttnn)


def test_the_sets_fastest_against_ttnn_uses_judged_sets_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    wh, bh = "wormhole_n150", "blackhole_p150_13x10"
    # TTNN / best = (TTNN / pick) * (pick / best); a --ttnn result (size 2) has no set.
    summarize_ttnn([case(wh, 125, 0.02, 1.01), case(bh, 125, 0.0, 0.98), case(bh, 2, 0.0, 1.5)])
    lines = capsys.readouterr().out.splitlines()

    def geomean(prefix: str, arch: str) -> float:
        (line,) = [x for x in lines if x.startswith(prefix) and f" on {arch} " in x]
        return float(re.findall(r"geomean ([\d.]+)x", line)[0])

    assert geomean("the set's fastest", wh) == pytest.approx(1.01 * 1.02, abs=5e-4)
    assert geomean("the set's fastest", bh) == pytest.approx(0.98, abs=5e-4)
    assert geomean("the set's fastest", "all") == pytest.approx(
        math.sqrt(1.01 * 1.02 * 0.98), abs=5e-4
    )
    assert geomean("Loom's pick", bh) == pytest.approx(math.sqrt(0.98 * 1.5), abs=5e-4)


def test_cases_run_side_by_side_print_and_record_in_case_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Costs out of case order: the workers take the largest first.
    cases = [("gemm", "wormhole_n150", {"M": m, "N": 32, "K": 32}) for m in (32, 4096, 64, 2048)]

    def fake(
        kernel: str, arch: str, shape: dict[str, int], args: argparse.Namespace
    ) -> CaseOutcome:
        res = CaseResult(kernel, arch, f"M={shape['M']}", 100, 1.0, 1.0, 1, 0.0, "", 0.0, 0.9)
        line = f"case M={shape['M']} inner jobs {args.jobs}"
        return CaseOutcome(res, line, [{"sim": float(shape["M"])}])

    monkeypatch.setattr(selection, "run_case", fake)
    outputs = []
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}.json"
        args = argparse.Namespace(jobs=jobs, out=str(out))
        results = judge(cases, args)
        assert [r.shape for r in results] == ["M=32", "M=4096", "M=64", "M=2048"]
        lines = capsys.readouterr().out.splitlines()
        # Side by side, each case simulates its own set serially.
        assert lines == [f"case M={s['M']} inner jobs 1" for _, _, s in cases]
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    assert list(json.loads(outputs[0])) == sorted(selection.case_key(*c) for c in cases)


def test_every_family_resolves_and_a_shape_that_does_not_compile_is_no_schedule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each family's file follows Loom's SHAPE_KEYS contract and names its shapes' keys;
    `--quick` judges one case of each; a case that does not compile prints 'no schedule'
    with the compiler's reason and the summary counts it apart."""
    from loom.errors import InfeasibleError
    from selection_families import FAMILIES, QUICK, family_cases, kernel_spec

    assert {k for k, _, _ in QUICK} == set(FAMILIES)
    for name, shapes in FAMILIES.items():
        spec = kernel_spec(name)
        assert spec.file is None and all(set(s) == set(spec.shape_keys) for s in shapes)
    assert len(family_cases(("a", "b"))) == 2 * sum(len(s) for s in FAMILIES.values())
    err = InfeasibleError("no schedule of rms_norm fits wormhole_n150: L1 footprint")
    out = selection.unscheduled("rms_norm", "wormhole_n150", {"M": 1024, "N": 8192}, err)
    assert "no schedule: no schedule of rms_norm fits" in out.line and out.record == []
    judged = dataclasses.replace(case("wormhole_n150", 30, 0.02, 1.0), kernel="rms_norm")
    selection.summarize([judged, out.result])
    (line,) = [s for s in capsys.readouterr().out.splitlines() if s.startswith("rms_norm on")]
    assert "cases   1" in line and "no schedule 1" in line
