"""Lowering: Schedule -> Program, the per-core streams shared by codegen and timing."""

from __future__ import annotations

from loom.lower.check import check_program
from loom.lower.lower import lower
from loom.lower.printer import format_program

__all__ = ["check_program", "format_program", "lower"]
