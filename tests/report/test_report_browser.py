"""The HTML report in a real browser: headless Chromium opens the page written by
`loom run --html`, with no console message, one mesh element per core, and a screenshot.

Chromium comes from the distribution (`apt-get install -y chromium`; `.ci/run` installs
it). Without it the test skips locally, but fails under CI (env CI set).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from loom.cli import main


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    message = (
        "headless Chromium is not installed (Debian: `apt-get update && apt-get install -y "
        "chromium`), so the report cannot be opened in a browser"
    )
    if os.environ.get("CI"):
        pytest.fail(message + "; under CI it must be installed (see .ci/run)")
    pytest.skip(message)


def _browser(args: list[str], page: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


class _Dom(HTMLParser):
    """Counts the mesh's core elements and collects every resource address."""

    def __init__(self) -> None:
        super().__init__()
        self.in_mesh = 0
        self.cores: list[tuple[str, str]] = []
        self.resources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "svg" and "mesh" in classes:
            self.in_mesh += 1
        if self.in_mesh and tag == "g" and "core" in classes:
            self.cores.append((a.get("data-y") or "", a.get("data-x") or ""))
        for key in ("src", "href"):
            value = a.get(key)
            if value and tag != "a":  # a link is followed on click only
                self.resources.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg" and self.in_mesh:
            self.in_mesh -= 1


def test_run_report_opens_in_chromium(tmp_path: Path) -> None:
    _chromium()
    report = tmp_path / "report.html"
    code = main(["run", "gemm", "--shape", "M=256,N=512,K=128", "--html", str(report), "--quiet"])
    assert code == 0
    assert (tmp_path / "report.trace.json").is_file()

    dom = _browser(["--dump-dom"], report, tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], "the page wrote to the console:\n" + "\n".join(console)

    parsed = _Dom()
    parsed.feed(dom.stdout)
    assert len(parsed.cores) == 64, "wormhole_n150 has 8x8 cores: one mesh element each"
    assert len(set(parsed.cores)) == 64
    external = [r for r in parsed.resources if not r.startswith(("data:", "#"))]
    assert external == [], f"the page loads resources from outside itself: {external}"
    assert re.search(r"Why this schedule", dom.stdout)

    shot = tmp_path / "report.png"
    pic = _browser(
        ["--hide-scrollbars", "--window-size=1280,4000", f"--screenshot={shot}"], report, tmp_path
    )
    assert pic.returncode == 0, pic.stderr[-2000:]
    assert shot.stat().st_size > 50_000
