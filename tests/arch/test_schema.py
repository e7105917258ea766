"""The architecture file's pydantic models: strict, complete, and the source of the schema."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from loom.arch import Arch, builtin_path, load_arch
from loom.arch.schema import FIELD_PATHS, ArchFile, json_schema, to_arch


def _raw(name: str = "wormhole_n150") -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(builtin_path(name).read_text())
    return data


def _dataclass_paths(cls: type, prefix: str = "") -> list[str]:
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name != "sources":
            out.append(f"{prefix}{f.name}")
            if dataclasses.is_dataclass(hints[f.name]):
                out += _dataclass_paths(hints[f.name], f"{prefix}{f.name}.")
    return out


def test_the_models_mirror_the_runtime_dataclasses() -> None:
    assert [p for p in FIELD_PATHS if not p.startswith("dram.banks.")] == _dataclass_paths(Arch)


def test_a_validated_file_converts_to_the_loaded_arch() -> None:
    assert to_arch(ArchFile.model_validate(_raw())) == load_arch("wormhole_n150")


@pytest.mark.parametrize(
    ("path", "value", "kind"),
    [
        (("grid_x",), "8", "int_type"),
        (("clock_ghz",), "1.0", "float_type"),
        (("noc", "count"), 2.0, "int_type"),
        (("clock_ghz",), float("inf"), "finite_number"),
        (("dram", "efficiency"), 1.01, "less_than_equal"),
        (("noc", "clock_mhz"), 1000, "extra_forbidden"),
    ],
)
def test_validation_is_strict(path: tuple[str, ...], value: object, kind: str) -> None:
    raw = _raw()
    node = raw
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    with pytest.raises(ValidationError) as info:
        ArchFile.model_validate(raw)
    assert [e["type"] for e in info.value.errors()] == [kind]
    assert info.value.errors()[0]["loc"] == path


def test_cross_field_rules_run_as_the_model_validator() -> None:
    raw = _raw()
    raw["l1_usable_bytes"] = raw["l1_bytes"] + 1
    with pytest.raises(ValidationError) as info:
        ArchFile.model_validate(raw)
    (error,) = info.value.errors()
    assert error["type"] == "arch_rules"
    assert [p.path for p in error["ctx"]["problems"]] == ["l1_usable_bytes"]


def test_schema_is_the_models() -> None:
    schema = json_schema()
    assert schema["title"] == "Arch" and schema["additionalProperties"] is False
    assert schema["properties"]["clock_ghz"] == {
        "exclusiveMinimum": 0,
        "maximum": 10,
        "title": "Clock Ghz",
        "type": "number",
    }
    assert set(schema["required"]) == {p for p in FIELD_PATHS if "." not in p}
