"""Descriptions built on a base (`base: <built-in>`): the Blackhole grids share one file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from loom.arch import builtin_path, load_arch
from loom.errors import ArchError


@pytest.mark.parametrize(
    ("name", "grid_x"), [("blackhole_p150_13x10", 13), ("blackhole_12x10", 12)]
)
def test_blackhole_grids_differ_from_the_base_only_in_the_grid(name: str, grid_x: int) -> None:
    base, arch = load_arch("blackhole_p150"), load_arch(name)
    assert arch.grid_x == grid_x and len(arch.worker_noc_x) == grid_x
    same = {"name", "description", "grid_x", "worker_noc_x", "sources"}
    for f in dataclasses.fields(arch):
        if f.name not in same:
            assert getattr(arch, f.name) == getattr(base, f.name), f.name
    sources = dict(arch.sources)
    assert sources["grid_x"] != dict(base.sources)["grid_x"]
    assert sources["dram.bank_bytes_per_cycle"] == dict(base.sources)["dram.bank_bytes_per_cycle"]
    assert "base:" in builtin_path(name).read_text()


def test_p100a_differs_from_the_p150_only_in_its_dram_banks() -> None:
    """The p100a is the p150 with one GDDR6 controller fewer: 7 banks at the same rate
    (448 GB/s), the same grid, clock, compute and NoC; only the bank list is its own."""
    base, arch = load_arch("blackhole_p150"), load_arch("blackhole_p100a")
    assert len(arch.dram.banks) == 7 and set(arch.dram.banks) < set(base.dram.banks)
    assert arch.dram.peak_bytes_per_cycle * arch.clock_ghz == pytest.approx(448, rel=0.002)
    assert dataclasses.replace(base.dram, banks=arch.dram.banks) == arch.dram
    for f in dataclasses.fields(arch):
        if f.name not in {"name", "description", "dram", "sources"}:
            assert getattr(arch, f.name) == getattr(base, f.name), f.name
    differing = {k for k, v in arch.sources if dict(base.sources)[k] != v}
    assert differing == {"dram.banks"}
    assert "base: blackhole_p150" in builtin_path("blackhole_p100a").read_text()


def test_every_constant_has_a_source() -> None:
    for name in (
        "wormhole_n150",
        "blackhole_p150",
        "blackhole_p150_13x10",
        "blackhole_12x10",
        "blackhole_p100a",
    ):
        sources = dict(load_arch(name).sources)
        for key, text in sources.items():
            assert text.strip() and "PENDING" not in text, (name, key)


def test_a_user_file_on_a_base_merges_nested_fields(tmp_path: Path) -> None:
    path = tmp_path / "bh_fast.yaml"
    path.write_text(
        yaml.safe_dump(
            {"base": "blackhole_p150", "name": "bh_fast", "fixed": {"program_launch_us": 1.0}}
        )
    )
    arch = load_arch(str(path))
    assert arch.name == "bh_fast" and arch.fixed.program_launch_us == 1.0
    assert arch.fixed.semaphore_cycles == load_arch("blackhole_p150").fixed.semaphore_cycles


def test_an_unknown_base_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"base": "blackhole_p999", "name": "x"}))
    with pytest.raises(ArchError, match="base 'blackhole_p999' is not a built-in description"):
        load_arch(str(path))


def test_a_wrong_tile_size_is_reported(tmp_path: Path) -> None:
    raw = yaml.safe_load(builtin_path("wormhole_n150").read_text())
    raw["tile"]["bytes_per_dtype"]["bfp8"] = 1024
    path = tmp_path / "wh.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ArchError, match=r"tile.bytes_per_dtype.bfp8 disagrees .* 1088 B"):
        load_arch(str(path))
