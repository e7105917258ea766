"""`loom eval` / `loom sweep` argument errors: one paragraph, non-zero exit, no output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loom.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "--archs", "nope"], r"unknown architecture nope; choose from wormhole_n150"),
        (["eval", "--kernels", "gemm,conv"], r"unknown kernel conv"),
        (["sweep", "my_kernel.py", "--shapes", "M=256"], r"runs the shipped kernels"),
        (["sweep", "gemm", "--shapes", "M=256,N=256"], r"missing: K"),
    ],
)
def test_eval_argument_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res"
    assert main([*argv, "--out", str(out), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert re.search(message, err)
    assert not out.exists()
