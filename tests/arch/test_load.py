"""Loading user YAML files, and the one-paragraph ArchError that lists every problem."""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from loom.arch import builtin_path, load_arch
from loom.errors import ArchError

Raw = dict[str, Any]


@pytest.fixture(scope="module")
def wormhole() -> Raw:
    return yaml.safe_load(builtin_path("wormhole_n150").read_text())


def _write(tmp_path: Path, data: Raw, name: str = "arch.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def _broken(tmp_path: Path, wormhole: Raw, edit: Callable[[Raw], None]) -> str:
    data = copy.deepcopy(wormhole)
    edit(data)
    return _write(tmp_path, data)


def test_user_file_loads(tmp_path: Path, wormhole: Raw) -> None:
    data = copy.deepcopy(wormhole)
    data.update(name="wh_4x4", grid_x=4, grid_y=4, worker_noc_x=[1, 2, 3, 4])
    data["worker_noc_y"] = [1, 2, 3, 4]
    data["noc"]["hop_cycles"] = 11
    arch = load_arch(_write(tmp_path, data))
    assert (arch.name, arch.num_cores, arch.noc.hop_cycles) == ("wh_4x4", 16, 11)
    assert dict(arch.sources)["noc.hop_cycles"].startswith("[S19]")
    assert load_arch(Path(_write(tmp_path, data, "again.yml"))).num_cores == 16


def test_user_file_without_sources_loads(tmp_path: Path, wormhole: Raw) -> None:
    data = copy.deepcopy(wormhole)
    del data["sources"]
    assert load_arch(_write(tmp_path, data)).sources == ()


def _set(path: str, value: Any) -> Callable[[Raw], None]:
    def edit(data: Raw) -> None:
        *parents, last = path.split(".")
        for part in parents:
            data = data[part]
        data[last] = value

    return edit


def _delete(path: str) -> Callable[[Raw], None]:
    def edit(data: Raw) -> None:
        *parents, last = path.split(".")
        for part in parents:
            data = data[part]
        del data[last]

    return edit


def _rename(old: str, new: str) -> Callable[[Raw], None]:
    def edit(data: Raw) -> None:
        *parents, last = old.split(".")
        for part in parents:
            data = data[part]
        data[new] = data.pop(last)

    return edit


def _source(key: str, note: str) -> Callable[[Raw], None]:
    def edit(data: Raw) -> None:
        data["sources"][key] = note

    return edit


WH_TRANSFER = {128: 5.5, 256: 10.1, 512: 18.0, 1024: 27.4, 2048: 30.0}

BROKEN = {
    "missing field": (
        _delete("noc.hop_cycles"),
        "noc.hop_cycles is missing; add it",
    ),
    "wrong type": (
        _set("noc.grid_x", "ten"),
        "noc.grid_x must be an integer (got 'ten'); fix the value",
    ),
    "bool is not an int": (
        _set("noc.count", True),
        "noc.count must be an integer (got True); fix the value",
    ),
    "negative bandwidth": (
        _set("noc.link_bytes_per_cycle", -32),
        "noc.link_bytes_per_cycle must be a positive number (got -32); fix the value",
    ),
    "zero count": (
        _set("noc.count", 0),
        "noc.count must be a positive number (got 0); fix the value",
    ),
    "negative latency": (
        _set("dram.read_latency_cycles", -1),
        "dram.read_latency_cycles must be zero or a positive number (got -1); fix the value",
    ),
    "unknown dtype": (
        _set("tile.bytes_per_dtype", {"bf16": 2048, "int8": 1024}),
        "tile.bytes_per_dtype has unknown dtype 'int8'; use one of bf16, fp16, fp32, bfp8",
    ),
    "table is not a mapping": (
        _set("compute.dst_tiles", [16, 8]),
        "compute.dst_tiles must be a non-empty mapping such as {key: value} (got [16, 8]); "
        "write it as a YAML mapping",
    ),
    "unknown fidelity": (
        _set(
            "matmul.cycles_per_tile",
            {"LoFi": 16, "HiFi2": 32, "HiFi3": 48, "HiFi4": 64, "HiFi5": 80},
        ),
        "matmul.cycles_per_tile has unknown math fidelity 'HiFi5'; use one of LoFi, HiFi2",
    ),
    "missing fidelity": (
        _set("matmul.cycles_per_tile", {"LoFi": 16, "HiFi2": 32, "HiFi4": 64}),
        "matmul.cycles_per_tile lacks math fidelity 'HiFi3'; add its cycles per tile",
    ),
    "unknown default fidelity": (
        _set("matmul.default_fidelity", "HiFi8"),
        "matmul.default_fidelity is not a math fidelity (got 'HiFi8'); use one of LoFi",
    ),
    "missing eltwise op": (
        _delete("compute.eltwise_cycles_per_tile.exp"),
        "compute.eltwise_cycles_per_tile lacks op 'exp'; add its cycles per tile",
    ),
    "grid larger than the torus": (
        _set("grid_y", 13),
        "grid_y must be at most noc.grid_y (12), the NoC torus size (got 13); shrink the "
        "compute grid or fix the torus size",
    ),
    "worker list length": (
        _set("worker_noc_y", [1, 2, 3, 4, 5, 7, 8]),
        "worker_noc_y must list one NoC coordinate per compute row (8), not 7; make its "
        "length equal grid_y",
    ),
    "worker outside the torus": (
        _set("worker_noc_x", [1, 2, 3, 4, 6, 7, 8, 10]),
        "worker_noc_x has coordinate 10 outside the NoC torus (0..9); fix the coordinate",
    ),
    "dram bank outside the torus": (
        _set("dram.banks", [{"noc_x": 0, "noc_y": 12}]),
        "dram.banks[0].noc_y has coordinate 12 outside the NoC torus (0..11)",
    ),
    "usable L1 above L1": (
        _set("l1_usable_bytes", 2_000_000),
        "l1_usable_bytes must be at most l1_bytes (1499136) (got 2000000); fix the value",
    ),
    "efficiency above one": (
        _set("dram.efficiency", 1.5),
        "dram.efficiency must be a fraction in (0, 1] (got 1.5); fix the value",
    ),
    "efficiency zero": (
        _set("dram.efficiency", 0),
        "dram.efficiency must be a fraction in (0, 1] (got 0); fix the value",
    ),
    "transfer sizes not increasing": (
        _set("noc.transfer_size_bytes_per_cycle", {256: 10.1, 128: 5.5, 2048: 30.0}),
        "noc.transfer_size_bytes_per_cycle must list transfer sizes in increasing order "
        "(got [256, 128, 2048]); sort the table by size",
    ),
    "transfer bandwidth falls": (
        _set("noc.transfer_size_bytes_per_cycle", {**WH_TRANSFER, 4096: 20.0}),
        "noc.transfer_size_bytes_per_cycle must not lose bandwidth as the transfer size grows",
    ),
    "effective link above raw": (
        _set("noc.link_effective_bytes_per_cycle", 40.0),
        "noc.link_effective_bytes_per_cycle must be at most noc.link_bytes_per_cycle (32)",
    ),
    "top-level typo": (
        _rename("clock_ghz", "clock_ghs"),
        "clock_ghs is not a field of Arch; rename it to 'clock_ghz'",
    ),
    "nested typo": (
        _rename("noc.hop_cycles", "hop_cycle"),
        "noc.hop_cycle is not a field of Noc; rename it to 'hop_cycles'",
    ),
    "source for no field": (
        _source("noc.hop_cycle", "typo"),
        "sources.noc.hop_cycle names no field of the description; rename it to 'noc.hop_cycles'",
    ),
    "source for no table entry": (
        _source("compute.eltwise_cycles_per_tile.erfinv", "not costed"),
        "sources.compute.eltwise_cycles_per_tile.erfinv names no field of the description",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_file_names_field_and_fix(tmp_path: Path, wormhole: Raw, case: str) -> None:
    edit, expected = BROKEN[case]
    path = _broken(tmp_path, wormhole, edit)
    with pytest.raises(ArchError, match=re.escape(expected)) as info:
        load_arch(path)
    message = str(info.value)
    assert message.startswith(f"arch file '{path}'")
    assert "\n" not in message
    assert info.value.__cause__ is None and info.value.__context__ is None


def _leaf_paths(node: Raw, prefix: str = "") -> Iterator[str]:
    """Every field of the file that is not a table entry or a list item."""
    tables = {"bytes_per_dtype", "cycles_per_tile", "dst_tiles", "eltwise_cycles_per_tile"}
    tables |= {"reduce_cycles_per_tile", "transfer_size_bytes_per_cycle"}
    for key, value in node.items():
        path = f"{prefix}{key}"
        if key == "sources":
            continue
        yield path
        if isinstance(value, dict) and key not in tables:
            yield from _leaf_paths(value, f"{path}.")


def _spec_paths(node: Any, prefix: str = "") -> Iterator[str]:
    """Every field of the spec dataclasses, walked on a loaded instance."""
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.name != "sources":
            yield f"{prefix}{f.name}"
            if dataclasses.is_dataclass(value):
                yield from _spec_paths(value, f"{prefix}{f.name}.")


def test_every_field_is_required(tmp_path: Path, wormhole: Raw) -> None:
    paths = list(_leaf_paths(wormhole))
    assert paths == list(_spec_paths(load_arch("wormhole_n150")))
    for path in paths:
        broken = _broken(tmp_path, wormhole, _delete(path))
        with pytest.raises(ArchError, match=re.escape(f"{path} is missing; add it")):
            load_arch(broken)


def test_every_problem_is_reported_together(tmp_path: Path, wormhole: Raw) -> None:
    def edit(data: Raw) -> None:
        data["noc"]["link_bytes_per_cycle"] = -32
        data["tile"]["bytes_per_dtype"]["int4"] = 512
        del data["matmul"]["cycles_per_tile"]["HiFi3"]
        data["dram"]["efficiency"] = 2
        data["grid_x"] = 11
        data["colck_ghz"] = data.pop("clock_ghz")

    path = _broken(tmp_path, wormhole, edit)
    with pytest.raises(ArchError) as info:
        load_arch(path)
    message = str(info.value)
    assert message.startswith(f"arch file '{path}' has 7 problems: (1) ")
    for expected in (
        "noc.link_bytes_per_cycle must be a positive number (got -32); fix the value",
        "tile.bytes_per_dtype has unknown dtype 'int4'",
        "matmul.cycles_per_tile lacks math fidelity 'HiFi3'",
        "dram.efficiency must be a fraction in (0, 1] (got 2)",
        "grid_x must be at most noc.grid_x (10)",
        "worker_noc_x must list one NoC coordinate per compute column (11), not 8",
        "colck_ghz is not a field of Arch; rename it to 'clock_ghz'",
    ):
        assert expected in message
    assert "clock_ghz is missing" not in message
    assert "\n" not in message


def test_yaml_syntax_error_is_wrapped(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\ngrid_x: [1, 2\nnoc: {\n")
    with pytest.raises(ArchError, match=r"arch file '.*bad\.yaml': YAML syntax error at line \d+"):
        load_arch(str(path))


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ArchError, match="must be a mapping of fields at the top level"):
        load_arch(str(path))
    path.write_text("")
    with pytest.raises(ArchError, match=r"top level \(it is NoneType\)"):
        load_arch(str(path))


def test_missing_file_lists_the_builtins(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(
        ArchError,
        match=r"not found; check the path, or use a built-in name: "
        r"blackhole_12x10, blackhole_p100a, blackhole_p150, blackhole_p150_13x10, wormhole_n150",
    ):
        load_arch(str(path))


def test_directory_is_not_an_arch_file(tmp_path: Path) -> None:
    with pytest.raises(ArchError, match="is not a file; give the path of a YAML file"):
        load_arch(str(tmp_path))


def test_unknown_builtin_lists_the_builtins() -> None:
    with pytest.raises(
        ArchError,
        match=r"unknown architecture 'wormhole_n151'.*use one of "
        r"blackhole_12x10, .*wormhole_n150, or the path of a YAML file",
    ):
        load_arch("wormhole_n151")
    with pytest.raises(ArchError, match="unknown architecture 'nope'"):
        builtin_path("nope")
