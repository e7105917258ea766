"""Data formats and math fidelities: tile sizes from one function, user spellings."""

from __future__ import annotations

import pytest

from loom.arch import load_arch
from loom.ir.formats import (
    DataFormat,
    MathFidelity,
    is_block_float,
    parse_fidelity,
    parse_format,
    tile_bytes,
)


@pytest.mark.parametrize(
    ("fmt", "size"),
    [("bf16", 2048), ("fp16", 2048), ("fp32", 4096), ("bfp8", 1088), ("bfp4", 576)],
)
def test_tile_bytes_of_a_32x32_tile(fmt: str, size: int) -> None:
    assert tile_bytes(fmt) == size


def test_block_float_tiles_carry_one_exponent_byte_per_16_elements() -> None:
    assert tile_bytes("bfp8", 32, 32) - 32 * 32 == 64
    assert tile_bytes("bfp4", 32, 32) - 32 * 32 // 2 == 64
    assert tile_bytes("bfp8", 16, 16) == 256 + 16
    assert is_block_float("bfp8") and is_block_float("bfp4") and not is_block_float("bf16")


@pytest.mark.parametrize("arch", ["wormhole_n150", "blackhole_p150", "blackhole_p150_13x10"])
def test_every_architecture_sizes_tiles_with_the_one_function(arch: str) -> None:
    a = load_arch(arch)
    for fmt in a.tile.dtypes:
        assert a.tile.bytes(fmt) == tile_bytes(fmt, a.tile.rows, a.tile.cols)


def test_user_spellings() -> None:
    assert parse_format("bfloat8_b") is DataFormat.BFP8
    assert parse_format("BFLOAT4_B") is DataFormat.BFP4
    assert parse_format("float32") is DataFormat.FP32
    assert parse_format("bf16") is DataFormat.BF16
    with pytest.raises(ValueError, match=r"unknown data format 'int8'.*bfp8"):
        parse_format("int8")


def test_fidelity_phases() -> None:
    assert [f.phases for f in MathFidelity] == [1, 2, 3, 4]
    assert parse_fidelity("hifi2") is MathFidelity.HIFI2
    with pytest.raises(ValueError, match="unknown math fidelity 'HiFi5'"):
        parse_fidelity("HiFi5")
