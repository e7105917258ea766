"""Pass 1 of validation: convert a parsed YAML document to the types :mod:`spec` declares.

Conversion is driven by the dataclass type hints, so a field added to ``spec.py`` is read
and checked without touching this module. Every problem (missing or unknown key, wrong
type, bad sign) is collected in :class:`Problems` instead of raised, so that one error can
list them all; a faulty value becomes :data:`ABSENT` and later rules skip it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import typing
from collections.abc import Iterator
from typing import Any

from loom.arch.spec import Arch

_NONNEG = frozenset(
    {
        "worker_noc_x",
        "worker_noc_y",
        "dram.banks.noc_x",
        "dram.banks.noc_y",
        "compute.eltwise_cycles_per_tile",
        "compute.reduce_cycles_per_tile",
        "matmul.tile_overhead_cycles",
        "compute.op_overhead_cycles",
        "noc.hop_cycles",
        "noc.niu_cycles",
        "noc.issue_cycles",
        "noc.read_latency_cycles",
        "dram.read_latency_cycles",
        "dram.write_latency_cycles",
        "fixed.program_launch_us",
        "fixed.host_dispatch_us",
        "fixed.semaphore_cycles",
    }
)
"""Fields where zero is allowed (coordinates, latencies, overheads); other numbers are > 0."""
_FRACTIONS = frozenset({"dram.efficiency"})
ABSENT: Any = object()
"""Marks a value that is missing or already reported as faulty."""


def _is_record(tp: Any) -> bool:
    """A dataclass type (as a plain bool, so the type checker keeps `tp` as declared)."""
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


class Problems:
    """Collects 'field: what is wrong; how to fix it' lines for one error message."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, path: str, what: str, fix: str, got: Any = ABSENT) -> None:
        shown = "" if got is ABSENT else f" (got {_short(got)})"
        self.lines.append(f"{path or 'the file'} {what}{shown}; {fix}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def join(path: str, name: object) -> str:
    return f"{path}.{name}" if path else str(name)


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def fields_of(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.name != "sources"]


def is_table(tp: Any) -> bool:
    """True for ``tuple[tuple[K, V], ...]``: a table written as a YAML mapping."""
    args = typing.get_args(tp)
    return typing.get_origin(tp) is tuple and typing.get_origin(args[0]) is tuple


def clean(tp: Any, raw: Any, path: str, base: str, out: Problems) -> Any:
    """`raw` converted to `tp` (dataclasses become dicts), or ABSENT after reporting why.

    `path` is the dotted path shown to the user, `base` the same without table keys and
    list indices (it selects the sign rule)."""
    if _is_record(tp):
        return _clean_record(tp, raw, path, base, out)
    if is_table(tp):
        return _clean_table(tp, raw, path, base, out)
    if typing.get_origin(tp) is tuple:
        if not isinstance(raw, list):
            out.add(path, "must be a list", "write it as a YAML list [..]", raw)
            return ABSENT
        (item,) = typing.get_args(tp)[:1]
        items = [clean(item, x, f"{path}[{i}]", base, out) for i, x in enumerate(raw)]
        return ABSENT if ABSENT in items else tuple(items)
    if tp is str:
        if isinstance(raw, str) and raw.strip():
            return raw
        out.add(path, "must be a non-empty string", "fix the value", raw)
        return ABSENT
    return _clean_number(tp, raw, path, base, out)


_UPPER = {
    "clock_ghz": 10.0,
    "grid_x": 256,
    "grid_y": 256,
    "noc.count": 16,
    "noc.grid_x": 256,
    "noc.grid_y": 256,
}
"""Sane upper bounds of fields where a slip (a unit or an exponent) is likely."""
_LIMIT = 2.0**48
"""Upper bound of every other number: beyond it the model's integer arithmetic and the
simulator's event times stop meaning anything."""


def _clean_number(tp: Any, raw: Any, path: str, base: str, out: Problems) -> Any:
    if tp is int and (isinstance(raw, bool) or not isinstance(raw, int)):
        out.add(path, "must be an integer", "fix the value", raw)
        return ABSENT
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        out.add(path, "must be a number", "fix the value", raw)
        return ABSENT
    if not math.isfinite(raw):
        out.add(path, "must be a finite number", "fix the value", raw)
        return ABSENT
    upper = _UPPER.get(base, _LIMIT)
    if raw > upper:
        out.add(path, f"must be at most {upper:g}", "fix the value (check its unit)", raw)
        return ABSENT
    if base in _FRACTIONS and not 0 < raw <= 1:
        out.add(path, "must be a fraction in (0, 1]", "fix the value", raw)
        return ABSENT
    if base in _NONNEG and raw < 0:
        out.add(path, "must be zero or a positive number", "fix the value", raw)
        return ABSENT
    if base not in _NONNEG and raw <= 0:
        out.add(path, "must be a positive number", "fix the value", raw)
        return ABSENT
    return raw if tp is int else float(raw)


def _clean_table(tp: Any, raw: Any, path: str, base: str, out: Problems) -> Any:
    if not isinstance(raw, dict) or not raw:
        out.add(
            path,
            "must be a non-empty mapping such as {key: value}",
            "write it as a YAML mapping",
            raw,
        )
        return ABSENT
    key_tp, value_tp = typing.get_args(typing.get_args(tp)[0])
    rows: list[tuple[Any, Any]] = []
    for key, value in raw.items():
        k = clean(key_tp, key, f"{path} key", base, out)
        v = clean(value_tp, value, join(path, key), base, out)
        rows.append((k, v))
    return ABSENT if any(ABSENT in row for row in rows) else tuple(rows)


def _clean_record(cls: type, raw: Any, path: str, base: str, out: Problems) -> Any:
    if not isinstance(raw, dict):
        out.add(path, "must be a mapping of fields", "write it as a YAML mapping", raw)
        return ABSENT
    record_fields = fields_of(cls)
    known = {f.name for f in record_fields} | ({"sources"} if cls is Arch else set())
    renamed: set[str] = set()  # a misspelt key is reported once, not also as a missing field
    for key in raw:
        if key not in known:
            near = difflib.get_close_matches(str(key), sorted(known - set(raw)), n=1)
            hint = f"rename it to '{near[0]}'" if near else "remove it"
            out.add(join(path, key), f"is not a field of {cls.__name__}", hint)
            renamed.update(near)
    values: dict[str, Any] = {}
    for f in record_fields:
        fpath, fbase = join(path, f.name), join(base, f.name)
        if f.name not in raw:
            if f.name not in renamed:
                out.add(fpath, "is missing", "add it (every built-in description shows it)")
            values[f.name] = ABSENT
        else:
            values[f.name] = clean(hints(cls)[f.name], raw[f.name], fpath, fbase, out)
    return values


def build(cls: type, values: dict[str, Any]) -> Any:
    """The frozen dataclass for cleaned `values` (which hold no ABSENT)."""
    kwargs: dict[str, Any] = {}
    for f in fields_of(cls):
        tp, value = hints(cls)[f.name], values[f.name]
        if _is_record(tp):
            value = build(tp, value)
        elif typing.get_origin(tp) is tuple and not is_table(tp):
            (item,) = typing.get_args(tp)[:1]
            if _is_record(item):
                value = tuple(build(item, v) for v in value)
        kwargs[f.name] = value
    return cls(**kwargs)


def paths_of(cls: type, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """(dotted path, is a table) of every field below `cls`."""
    for f in fields_of(cls):
        tp, path = hints(cls)[f.name], join(prefix, f.name)
        yield path, is_table(tp)
        item = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else tp
        if _is_record(item):
            yield from paths_of(item, path)


FIELD_PATHS: dict[str, bool] = dict(paths_of(Arch))


def json_schema(tp: Any = Arch, base: str = "") -> dict[str, Any]:
    """JSON schema of the YAML form of `tp`, from the same hints and bounds as :func:`clean`."""
    if _is_record(tp):
        props = {
            f.name: json_schema(hints(tp)[f.name], join(base, f.name)) for f in fields_of(tp)
        }
        if tp is Arch:
            props["sources"] = {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "dotted field path -> where the number comes from",
            }
        return {
            "type": "object",
            "title": tp.__name__,
            "properties": props,
            "required": [f.name for f in fields_of(tp)],
            "additionalProperties": False,
        }
    if is_table(tp):
        key_tp, value_tp = typing.get_args(typing.get_args(tp)[0])
        return {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"type": "string"} if key_tp is str else {"pattern": "^[0-9]+$"},
            "additionalProperties": json_schema(value_tp, base),
        }
    if typing.get_origin(tp) is tuple:
        return {"type": "array", "items": json_schema(typing.get_args(tp)[0], base)}
    if tp is str:
        return {"type": "string", "minLength": 1}
    schema: dict[str, Any] = {"type": "integer" if tp is int else "number"}
    if base in _FRACTIONS:
        schema.update(exclusiveMinimum=0, maximum=1)
        return schema
    schema["minimum" if base in _NONNEG else "exclusiveMinimum"] = 0
    schema["maximum"] = _UPPER.get(base, _LIMIT)
    return schema
