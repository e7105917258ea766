"""Data formats and math fidelities: typed values every stage shares.

A *data format* is how one tensor's elements are stored in a tile (DRAM, L1, NoC
traffic); a *math fidelity* is how many multiplier phases the matrix engine spends on one
product. Their per-architecture rates live in :mod:`loom.arch`; the bytes of one tile come
from :func:`tile_bytes` only.

Block-float formats (TT-Metal's ``bfloat8_b`` and ``bfloat4_b``) store a sign and a
mantissa per element and one 8-bit exponent per 16 consecutive elements of a face row
(a 32x32 tile is four 16x16 faces, so 64 exponents, 64 bytes, per tile): a bfp8 tile is
1024 + 64 = 1088 bytes, a bfp4 tile 512 + 64 = 576 (tt-metal ``tt_metal/api/tt-metalium/
tile.hpp`` / ``tt_backend_api_types.hpp``: ``tile_size(Bfp8_b) = 1024 + 64``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DataFormat(StrEnum):
    """Element storage formats (the short names Loom uses everywhere)."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP32 = "fp32"
    BFP8 = "bfp8"
    BFP4 = "bfp4"
    INT32 = "int32"


@dataclass(frozen=True)
class FormatInfo:
    element_bits: int
    """Stored bits per element (sign + mantissa for block-float formats)."""
    mantissa_bits: int
    """Explicit mantissa bits per element (the shared or own exponent not counted)."""
    shared_exponent_group: int
    """Elements sharing one 8-bit exponent (0: every element has its own exponent)."""
    ttnn_name: str
    """The TTNN / TT-Lang dtype name (``ttnn.<name>``)."""


FORMATS: dict[DataFormat, FormatInfo] = {
    DataFormat.BF16: FormatInfo(16, 7, 0, "bfloat16"),
    DataFormat.FP16: FormatInfo(16, 10, 0, "float16"),
    DataFormat.FP32: FormatInfo(32, 23, 0, "float32"),
    # bfp8_b: sign + 7-bit mantissa per element; bfp4_b: sign + 3-bit mantissa.
    DataFormat.BFP8: FormatInfo(8, 7, 16, "bfloat8_b"),
    DataFormat.BFP4: FormatInfo(4, 3, 16, "bfloat4_b"),
    # int32: 32-bit two's-complement integers (TT-Metal's Int32 tiles; Dst holds them in
    # 32-bit mode like fp32)
    DataFormat.INT32: FormatInfo(32, 31, 0, "int32"),
}

ALIASES: dict[str, DataFormat] = {
    **{f.value: f for f in DataFormat},
    **{info.ttnn_name: f for f, info in FORMATS.items()},
    "float": DataFormat.FP32,
    "half": DataFormat.FP16,
    "bfp8_b": DataFormat.BFP8,
    "bfp4_b": DataFormat.BFP4,
}
"""Spellings accepted from users: Loom's short names and TTNN's names."""


def parse_format(text: str) -> DataFormat:
    """The format `text` names (``bf16``, ``bfloat8_b``, ...); ValueError if none."""
    try:
        return ALIASES[text.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown data format '{text}'; use one of {', '.join(f.value for f in DataFormat)} "
            "(or TTNN's names bfloat16, float32, bfloat8_b, bfloat4_b)"
        ) from None


def is_block_float(fmt: str) -> bool:
    return FORMATS[DataFormat(fmt)].shared_exponent_group > 0


def tile_bytes(fmt: str, rows: int = 32, cols: int = 32) -> int:
    """Bytes of one rows x cols tile in `fmt`: the elements, plus one exponent byte per
    shared-exponent group for block-float formats. The one place tile sizes come from."""
    info = FORMATS[DataFormat(fmt)]
    elements = rows * cols
    data = elements * info.element_bits // 8
    if info.shared_exponent_group:
        data += -(-elements // info.shared_exponent_group)
    return data


class MathFidelity(StrEnum):
    """Matrix-engine multiplier phases: LoFi uses the operands' high bits once, HiFi2/3/4
    add the low-bit partial products in 2, 3, 4 passes."""

    LOFI = "LoFi"
    HIFI2 = "HiFi2"
    HIFI3 = "HiFi3"
    HIFI4 = "HiFi4"

    @property
    def phases(self) -> int:
        return {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}[self.value]


def parse_fidelity(text: str) -> MathFidelity:
    for f in MathFidelity:
        if f.value.lower() == text.strip().lower():
            return f
    raise ValueError(
        f"unknown math fidelity '{text}'; use one of {', '.join(f.value for f in MathFidelity)}"
    )
