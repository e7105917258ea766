"""How an integer host tensor is read into Loom's one integer tile format, int32.

Tiles hold integers as int32 (and Loom's index values, `tile.index` and argmax's
indices, as exact fp32 integers). A kernel argument of another integer width is stored
in DRAM as int32 by the host before the run, and this module is the one place that says
how, for the frontend (which types the loads) and the runner (which narrows the data):

* int8, uint8, int16: widened to int32, exactly (every value fits);
* int64 (torch's default for labels and token ids): narrowed to int32, and the loaded
  tile becomes an index value (exact fp32 integers, as `tile.index` is), so every value
  must lie within +-2^24 (where fp32 integers are exact); the host checks that range and
  refuses a tensor outside it before the run.

The dtypes are named as torch prints them (``str(torch.int64)``), so that the IR needs
no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.ir.formats import DataFormat

INDEX_LIMIT = 2**24
"""fp32 holds every integer of magnitude up to 2^24 exactly."""


@dataclass(frozen=True)
class IntegerRead:
    """How one integer dtype is read: stored as int32, the tile's format after the
    load, and the magnitude its values must not exceed (None: every value fits)."""

    dtype: str
    tile: DataFormat
    limit: int | None
    how: str


READS: dict[str, IntegerRead] = {
    "torch.int32": IntegerRead("torch.int32", DataFormat.INT32, None, "exactly"),
    **{
        name: IntegerRead(name, DataFormat.INT32, None, "widened exactly to int32")
        for name in ("torch.int8", "torch.uint8", "torch.int16")
    },
    "torch.int64": IntegerRead(
        "torch.int64",
        DataFormat.FP32,
        INDEX_LIMIT,
        "narrowed to int32 and loaded as exact fp32 index values (|value| <= 2^24)",
    ),
}
"""The integer dtypes a kernel argument may have, by torch's name for them."""


def integer_read(dtype: object) -> IntegerRead | None:
    """How a tensor of torch dtype `dtype` is read (None: not an integer Loom reads)."""
    return READS.get(str(dtype))


def range_error(name: str, dtype: object, low: int, high: int) -> str | None:
    """Why tensor `name` (torch dtype `dtype`, values in [low, high]) cannot be narrowed
    as its read says, or None when it can."""
    read = integer_read(dtype)
    if read is None or read.limit is None or max(-low, high) <= read.limit:
        return None
    return (
        f"input {name!r} ({read.dtype}) holds values in [{low}, {high}], but Loom reads a "
        f"{read.dtype} tensor {read.how}: its values must lie within +-{read.limit}; pass "
        "indices in that range, or a tensor of int32 (read exactly, computed on as int32 tiles)"
    )


def converts_by_product(operand: str, result: str) -> bool:
    """Whether converting a tile of format `operand` to `result` is an op of its own: an
    int32 tile made float is a product with a block of ones (TT-Lang 1.1.6 has no
    typecast, and its arithmetic between int32 and float blocks is float); the lowering
    emits that product and the model costs it as one elementwise multiply. Other
    conversions happen as the packer or unpacker moves the tile."""
    return operand == DataFormat.INT32 != result
