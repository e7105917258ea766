"""The architecture file as strict pydantic models: what a valid description is.

The models mirror the frozen dataclasses of :mod:`loom.arch.spec` field for field, in the
YAML form (tables are mappings, lists are lists). Validation is strict: no coercion
(``"8"`` is not 8, ``true`` is not 1), every number finite and inside its range, unknown
keys rejected by name. The rules that relate fields to each other live in
:mod:`loom.arch.rules` and run as the model's after-validator. :func:`to_arch` is the one
place that turns a validated model into the runtime :class:`Arch`.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from loom.arch import rules
from loom.arch.spec import Arch

LIMIT = 2**48
"""Upper bound of every number without a tighter one: beyond it the model's integer
arithmetic and the simulator's event times stop meaning anything."""

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Count = Annotated[int, Field(gt=0, le=LIMIT)]
"""A positive integer (sizes, bandwidths in whole bytes, counts)."""
Cycles = Annotated[int, Field(ge=0, le=LIMIT)]
"""A non-negative integer (latencies, overheads, NoC coordinates)."""
Rate = Annotated[float, Field(gt=0, le=LIMIT)]
"""A positive number (bandwidths, per-transaction costs)."""
Micros = Annotated[float, Field(ge=0, le=LIMIT)]
"""A non-negative duration in microseconds."""
Fraction = Annotated[float, Field(gt=0, le=1)]
Grid = Annotated[int, Field(gt=0, le=256)]
"""A grid or torus size: at most 256 per axis (a slip of a digit is caught)."""


class _Section(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


class TileFile(_Section):
    model_config = ConfigDict(title="Tile")
    rows: Count
    cols: Count
    bytes_per_dtype: Annotated[dict[Text, Count], Field(min_length=1)]


class MatmulFile(_Section):
    model_config = ConfigDict(title="Matmul")
    cycles_per_tile: Annotated[dict[Text, Count], Field(min_length=1)]
    row_granularity: Count
    default_fidelity: Text
    tile_overhead_cycles: Cycles


class ComputeFile(_Section):
    model_config = ConfigDict(title="Compute")
    dst_tiles: Annotated[dict[Text, Count], Field(min_length=1)]
    eltwise_cycles_per_tile: Annotated[dict[Text, Cycles], Field(min_length=1)]
    reduce_cycles_per_tile: Annotated[dict[Text, Cycles], Field(min_length=1)]
    unpack_bytes_per_cycle: Rate
    pack_bytes_per_cycle: Rate
    pack_accumulate_bytes_per_cycle: Rate
    op_overhead_cycles: Cycles


class NocFile(_Section):
    model_config = ConfigDict(title="Noc")
    count: Annotated[int, Field(gt=0, le=16)]
    grid_x: Grid
    grid_y: Grid
    link_bytes_per_cycle: Count
    link_effective_bytes_per_cycle: Rate
    hop_cycles: Cycles
    niu_cycles: Cycles
    max_packet_bytes: Count
    transfer_size_bytes_per_cycle: Annotated[dict[Count, Rate], Field(min_length=1)]
    unicast_bytes_per_cycle: Rate
    multicast_bytes_per_cycle: Rate
    multicast_linked_bytes_per_cycle: Rate
    multicast_ack_cycles_per_receiver: Rate
    issue_cycles: Cycles
    write_issue_cycles: Cycles
    read_latency_cycles: Cycles


class DramBankFile(_Section):
    model_config = ConfigDict(title="DramBank")
    noc_x: Cycles
    noc_y: Cycles


class DramFile(_Section):
    model_config = ConfigDict(title="Dram")
    banks: list[DramBankFile]
    bank_bytes_per_cycle: Rate
    efficiency: Fraction
    read_latency_cycles: Cycles
    write_latency_cycles: Cycles
    reader_bytes_per_cycle: Rate
    writer_bytes_per_cycle: Rate
    write_efficiency: Fraction
    read_request_cycles: Rate
    write_request_cycles: Rate
    all_cores_bytes_per_cycle: Rate
    page_bytes: Count


class FixedFile(_Section):
    model_config = ConfigDict(title="Fixed")
    program_launch_us: Micros
    host_dispatch_us: Micros
    semaphore_cycles: Cycles


class ArchFile(_Section):
    """A whole description (after any ``base:`` is merged in)."""

    model_config = ConfigDict(title="Arch")
    name: Text
    description: Text
    grid_x: Grid
    grid_y: Grid
    worker_noc_x: list[Cycles]
    worker_noc_y: list[Cycles]
    clock_ghz: Annotated[float, Field(gt=0, le=10)]
    l1_bytes: Count
    l1_usable_bytes: Count
    dataflow_buffers: Count
    tile: TileFile
    matmul: MatmulFile
    compute: ComputeFile
    noc: NocFile
    dram: DramFile
    fixed: FixedFile
    sources: dict[str, Text] | None = Field(
        default=None, description="dotted field path -> where the number comes from"
    )

    @model_validator(mode="after")
    def _cross_field(self) -> ArchFile:
        problems = rules.check(rules.View(self.model_dump(), ()), FIELD_PATHS)
        if problems:
            raise PydanticCustomError(
                "arch_rules",
                "{count} cross-field problems",
                {"count": len(problems), "problems": problems},
            )
        return self


def _unwrap(tp: Any) -> Any:
    """`tp` without its ``Annotated`` constraints and ``| None``."""
    while True:
        if typing.get_origin(tp) is Annotated:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) in (typing.Union, type(int | None)):
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
        else:
            return tp


def field_type(model: type[BaseModel], name: str) -> Any:
    """The bare type of field `name` of `model` (a model, ``dict[K, V]``, ``list[T]``...)."""
    info = model.model_fields[name]
    return _unwrap(info.annotation)


def _paths(model: type[BaseModel], prefix: str = "") -> typing.Iterator[tuple[str, bool]]:
    for name in model.model_fields:
        if name == "sources":
            continue
        tp, path = field_type(model, name), f"{prefix}{name}"
        yield path, typing.get_origin(tp) is dict
        item = _unwrap(typing.get_args(tp)[0]) if typing.get_origin(tp) is list else tp
        if isinstance(item, type) and issubclass(item, BaseModel):
            yield from _paths(item, f"{path}.")


FIELD_PATHS: dict[str, bool] = dict(_paths(ArchFile))
"""Dotted path of every field -> whether it is a table (the keys ``sources`` may name)."""


def to_arch(model: ArchFile) -> Arch:
    """The runtime :class:`Arch` of a validated file: tables become (key, value) pairs,
    lists tuples, sections their dataclasses."""
    arch: Arch = _build(Arch, model)
    return arch


def _build(cls: type, model: BaseModel) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = getattr(model, f.name)
        kwargs[f.name] = _value(hints[f.name], value)
    return cls(**kwargs)


def _value(tp: Any, value: Any) -> Any:
    if value is None:
        return ()
    if isinstance(value, BaseModel):
        return _build(tp, value)
    if isinstance(value, dict):
        return tuple(value.items())
    if isinstance(value, list):
        item = typing.get_args(tp)[0]
        return tuple(_value(item, x) for x in value)
    return value


def json_schema() -> dict[str, Any]:
    """The JSON schema of an architecture file (``loom schema arch``)."""
    schema = ArchFile.model_json_schema()
    schema["description"] = (
        "A Loom architecture description (YAML). A file may instead start with "
        "`base: <built-in name>` and give only the fields that differ; the merged "
        "document must match this schema."
    )
    return schema
