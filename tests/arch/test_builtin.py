"""The built-in architecture descriptions: they load, every number is sourced, and the
derived figures match the reference (hardware-and-peers.md §1.3 peak table, §1.7 DRAM)."""

from __future__ import annotations

import dataclasses

import pytest

from loom.arch import (
    ELTWISE_OPS,
    MATH_FIDELITIES,
    REDUCE_OPS,
    Arch,
    builtin_path,
    describe_arch,
    list_archs,
    load_arch,
    source_of,
    unsourced_fields,
)

BUILTINS = [
    "blackhole_12x10",
    "blackhole_p100a",
    "blackhole_p150",
    "blackhole_p150_13x10",
    "wormhole_n150",
]
BLACKHOLES = ["blackhole_12x10", "blackhole_p100a", "blackhole_p150", "blackhole_p150_13x10"]


def test_list_archs_is_sorted_and_complete() -> None:
    assert list_archs() == BUILTINS


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_loads_with_its_own_name(name: str) -> None:
    arch = load_arch(name)
    assert isinstance(arch, Arch)
    assert arch.name == name
    assert builtin_path(name).stem == name


@pytest.mark.parametrize("name", BUILTINS)
def test_every_number_has_a_source(name: str) -> None:
    arch = load_arch(name)
    assert unsourced_fields(arch) == []
    assert all(note.strip() for _, note in arch.sources)


@pytest.mark.parametrize("name", BUILTINS)
def test_estimates_say_so(name: str) -> None:
    """Numbers without a direct measurement are marked in their source note."""
    arch = load_arch(name)
    guessed_axis = "worker_noc_y" if name == "wormhole_n150" else "worker_noc_x"
    for path in ("dram.page_bytes", "compute.eltwise_cycles_per_tile.log", guessed_axis):
        note = source_of(arch, path)
        assert note is not None and "approximate" in note
    assert "derived" in (source_of(arch, "dram.bank_bytes_per_cycle") or "")


def test_builtins_are_cached() -> None:
    assert load_arch("wormhole_n150") is load_arch("wormhole_n150")


@pytest.mark.parametrize(
    ("name", "grid", "clock", "hifi4"),
    [
        ("wormhole_n150", (8, 8), 1.0, 65.5),
        ("blackhole_p150", (11, 10), 1.35, 152.1),
        ("blackhole_p150_13x10", (13, 10), 1.35, 179.7),
        ("blackhole_12x10", (12, 10), 1.35, 165.9),
        ("blackhole_p100a", (11, 10), 1.35, 152.1),
    ],
)
def test_grid_clock_and_peak(name: str, grid: tuple[int, int], clock: float, hifi4: float) -> None:
    arch = load_arch(name)
    assert (arch.grid_x, arch.grid_y) == grid
    assert arch.clock_ghz == clock
    assert arch.peak_tflops("HiFi4") == pytest.approx(hifi4, abs=0.05)
    assert arch.peak_tflops("LoFi") == pytest.approx(4 * arch.peak_tflops("HiFi4"))


@pytest.mark.parametrize(
    ("name", "peak_gbs"),
    [("wormhole_n150", 288), ("blackhole_p150", 512), ("blackhole_p100a", 448)],
)
def test_dram_aggregate_matches_the_spec_sheet(name: str, peak_gbs: float) -> None:
    arch = load_arch(name)
    assert arch.dram.peak_bytes_per_cycle * arch.clock_ghz == pytest.approx(peak_gbs, rel=0.002)


@pytest.mark.parametrize("name", BUILTINS)
def test_lookups_later_stages_use(name: str) -> None:
    arch = load_arch(name)
    for op in ELTWISE_OPS:
        assert arch.compute.eltwise(op) >= 0
    for op in REDUCE_OPS:
        assert arch.compute.reduce(op) >= 0
    assert arch.compute.dst_capacity("bf16") == 2 * arch.compute.dst_capacity("fp32")
    assert [arch.matmul.peak_cycles(f) for f in MATH_FIDELITIES] == [16, 32, 48, 64]
    overhead = arch.matmul.tile_overhead_cycles
    assert [arch.matmul.cycles(f) for f in MATH_FIDELITIES] == [
        16 + overhead,
        32 + overhead,
        48 + overhead,
        64 + overhead,
    ]
    assert arch.tile.bytes("bf16") == 2048 and arch.tile.bytes("bfp8") == 1088
    assert arch.matmul.row_efficiency(1) == pytest.approx(1 / 8)
    top = arch.noc.transfer_size_bytes_per_cycle[-1][1]
    assert arch.noc.size_bandwidth(1 << 20) == top
    assert arch.noc.size_bandwidth(64) < arch.noc.size_bandwidth(2048) <= top


@pytest.mark.parametrize("name", BUILTINS)
def test_workers_and_dram_banks_do_not_overlap(name: str) -> None:
    arch = load_arch(name)
    workers = {(x, y) for x in arch.worker_noc_x for y in arch.worker_noc_y}
    banks = {(b.noc_x, b.noc_y) for b in arch.dram.banks}
    assert len(workers) == arch.num_cores
    assert not workers & banks


@pytest.mark.parametrize("name", ["blackhole_12x10", "blackhole_p150_13x10"])
def test_blackhole_files_differ_only_in_the_grid(name: str) -> None:
    base, other = load_arch("blackhole_p150"), load_arch(name)
    assert other.worker_noc_x[: base.grid_x] == base.worker_noc_x
    grid_only = {"name", "description", "grid_x", "worker_noc_x", "sources"}
    same = {k: getattr(other, k) for k in grid_only}
    assert dataclasses.replace(base, **same) == other
    differing = {k for k, v in base.sources if dict(other.sources)[k] != v}
    assert differing <= {"grid_x", "worker_noc_x"}


def test_describe_shows_every_section_and_the_sources() -> None:
    text = describe_arch(load_arch("wormhole_n150"))
    for expected in (
        "8 x 8 = 64 cores",
        "1.0 GHz",
        "1,398,784 B usable",
        "bf16 2048 B",
        "HiFi4    64 cycles/tile",
        "65.5 TFLOPS",
        "262.1 TFLOPS",
        "exp 70",
        "max 8, sum 16",
        "10 x 12 torus",
        "288.0 GB/s aggregate peak",
        "program launch 4.5 us",
        "sources",
        "noc.hop_cycles: [S19]",
    ):
        assert expected in text
    assert "no source" not in text
