"""The --dtype specification and its application to a TileProgram."""

from __future__ import annotations

import pytest

from loom.errors import FormatError
from loom.frontend.formats import FormatSpec, parse_format_spec


def test_default_overrides_and_accumulator() -> None:
    spec = parse_format_spec("bfloat8_b, b=bfp4, acc=fp32")
    assert spec == FormatSpec("bfp8", (("b", "bfp4"),), "fp32")
    assert spec.label() == "bfp8,b=bfp4,acc=fp32"
    assert parse_format_spec("").empty


def test_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(FormatError, match="--dtype 'int4': unknown data format 'int4'"):
        parse_format_spec("int4")


def test_block_float_accumulator_is_refused() -> None:
    with pytest.raises(FormatError, match="Dst register"):
        parse_format_spec("acc=bfp8")
