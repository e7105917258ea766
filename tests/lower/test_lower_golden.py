"""The printed Programs of one schedule per kernel, as golden text."""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import FAST
from programs import lowered

from loom.lower.printer import format_program

GOLDEN = Path(__file__).parent / "golden"
SHOWN = ("gemm512-wh-mcast-ab-2buf", "fa-d64-wh-mcast-kv-waves", "fd-bh-split8-waves-mcast-q")


@pytest.mark.parametrize("case_id", SHOWN)
def test_program_text(case_id: str, golden) -> None:  # type: ignore[no-untyped-def]
    case = next(c for c in FAST if c.id == case_id)
    golden(GOLDEN / f"{case_id}.txt", format_program(lowered(case)))
