"""Fixtures for the lowering tests: the lowered programs of the case matrix."""

from __future__ import annotations

import pytest
from cases import FAST, Case
from programs import lowered

from loom.ir.program import Program


@pytest.fixture(scope="session", params=FAST, ids=[c.id for c in FAST])
def case_program(request: pytest.FixtureRequest) -> tuple[Case, Program]:
    return request.param, lowered(request.param)
