"""`loom eval` / `loom sweep` argument errors: one paragraph, non-zero exit, no output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loom.cli import main


@pytest.mark.parametrize(
    ("argv", "message", "code"),
    [
        (["eval", "--archs", "nope"], r"unknown architecture nope; choose from wormhole_n150", 2),
        (["eval", "--kernels", "gemm,conv"], r"unknown kernel conv", 2),
        (["eval", "--fa-scale", "0"], r"--fa-scale 0: .* positive integer", 2),
        (["sweep", "my_kernel.py", "--shapes", "M=256"], r"runs the evaluation.s kernels", 2),
        (["sweep", "gemm", "--shapes", "M=256,N=256"], r"missing: K", 1),  # a bad shape: input
    ],
)
def test_eval_argument_errors(
    argv: list[str],
    message: str,
    code: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "res"
    assert main([*argv, "--out", str(out), "--jobs", "1"]) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert re.search(message, err)
    assert not out.exists()


@pytest.mark.slow
def test_sweep_html_writes_a_page_per_case_and_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res"
    argv = ["sweep", "gemm", "--shapes", "M=256,N=256,K=256", "--jobs", "1", "--no-neighbours"]
    assert main([*argv, "--html", "--out", str(out)]) == 0
    assert "pages       1 case reports" in capsys.readouterr().out
    pages = sorted(p.name for p in (out / "pages").iterdir())
    assert pages == ["gemm__wormhole_n150__M_256_N_256_K_256.html", "index.html"]
    index = (out / "pages" / "index.html").read_text()
    assert f'href="{pages[0]}"' in index and "ttnn-matmul-oob" in index
    page = (out / "pages" / pages[0]).read_text()
    assert page.count('<g class="core ') == 64 and 'id="simulation"' in page
