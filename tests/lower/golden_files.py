"""Golden-file comparison for the lowering and back-end tests (`--update-golden`, the
project's switch, rewrites them); the files live next to the tests that own them."""

from __future__ import annotations

from pathlib import Path

import pytest


def check_golden(request: pytest.FixtureRequest, path: Path, text: str) -> None:
    if request.config.getoption("--update-golden", default=False):
        path.write_text(text)
        return
    if not path.exists():
        pytest.fail(f"golden file {path} is missing; run pytest --update-golden to create it")
    assert text == path.read_text(), f"{path.name} changed; review and run pytest --update-golden"
