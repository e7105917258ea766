"""The TT-Lang back-end tests reuse the lowering tests' case matrix and helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lower"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave this folder's `slow` tests out unless a marker expression asks for them
    (`pytest -m slow`): the project's addopts do not deselect them."""
    if config.getoption("markexpr"):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords and HERE in Path(str(item.path)).parents:
            item.add_marker(skip)
