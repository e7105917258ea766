"""docs/api.md is executed as written: every `>>>` example must print what the page says."""

from __future__ import annotations

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_api_page_examples_run() -> None:
    result = doctest.testfile(
        str(DOC),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert result.attempted >= 30
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {DOC} failed"
