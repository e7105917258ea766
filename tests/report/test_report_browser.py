"""The HTML report in a real browser: headless Chromium opens the page written by
`loom run --html`, with no console message, one mesh element per core, and a screenshot.

The page is driven over the Chrome DevTools Protocol (`--remote-debugging-pipe`, see
`chromium_devtools.py`): every console call, uncaught exception and browser log entry (a resource
that failed to load) arrives as an event, so the check does not depend on Chromium's log
format; a control page with known faults shows that the check sees them. Chromium comes
from the distribution (`apt-get install -y chromium`; `.ci/run` installs it). Without it
the test skips locally, but fails under CI (env CI set).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from chromium_devtools import Browser  # tests/report/chromium_devtools.py

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


def test_console_check_sees_a_faulty_page(tmp_path: Path) -> None:
    page = tmp_path / "faulty.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img src="missing.png">'
        '<script>console.warn("careful"); undefinedFunction();</script></body></html>'
    )
    with Browser(_chromium(), tmp_path / "profile") as browser:
        browser.open(page.as_uri())
        browser.evaluate("1")  # a round trip: events sent before it have arrived
        found = browser.console()
    assert any("ERR_FILE_NOT_FOUND" in f for f in found), found
    assert "console.warning: careful" in found
    assert any("undefinedFunction is not defined" in f for f in found), found


def test_run_report_opens_in_chromium(tmp_path: Path) -> None:
    chromium = _chromium()
    report = tmp_path / "report.html"
    code = main(["run", "gemm", "--shape", "M=256,N=512,K=128", "--html", str(report), "--quiet"])
    assert code == 0
    assert (tmp_path / "report.trace.json").is_file()

    with Browser(chromium, tmp_path / "profile") as browser:
        browser.open(report.as_uri())
        cores = browser.evaluate(
            "Array.from(document.querySelectorAll('svg.mesh g.core'),"
            " g => g.dataset.y + ',' + g.dataset.x)"
        )
        external = browser.evaluate(
            "Array.from(document.querySelectorAll('[src], link[href]'),"
            " e => e.getAttribute('src') || e.getAttribute('href'))"
            ".filter(u => !u.startsWith('data:') && !u.startsWith('#'))"
        )
        sections = browser.evaluate("Array.from(document.querySelectorAll('section'), s => s.id)")
        # the page's one script: hovering a multicast net's legend entry highlights it
        hot = browser.evaluate(
            "(() => { const el = document.querySelector('li[data-net]');"
            " if (!el) return -1;"
            " el.dispatchEvent(new MouseEvent('mouseenter'));"
            " return document.querySelectorAll('.region.hot').length; })()"
        )
        browser.screenshot(tmp_path / "report.png")
        console = browser.console()
    assert console == [], "the page wrote to the console:\n" + "\n".join(console)
    assert len(cores) == 64 and len(set(cores)) == 64, "wormhole_n150: one element per core"
    assert external == [], f"the page loads resources from outside itself: {external}"
    for section in ("why", "source", "mesh", "heg", "candidates", "simulation", "verify"):
        assert section in sections
    assert hot > 0, "hovering a net's legend entry highlights none of its regions"
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "report.png").stat().st_size > 50_000
