"""The compact notebook view and the explanation, from a hand-written Schedule (no Helion,
no solver): what each shows, HTML escaping, and the simulated row only after a simulation."""

from __future__ import annotations

import dataclasses

import pytest

from loom.arch import load_arch
from loom.ir.schedule import Copy, Mapping, MeshLevel, Schedule, TopEntry
from loom.ir.solution import Solution
from loom.report.notebook import compact_view, render_compact
from loom.report.why import explain

SCHEDULE = Schedule(
    kernel="gemm",
    arch="wormhole_n150",
    shape={"M": 256, "N": 512, "K": 128},
    dtype="bf16",
    math_fidelity="HiFi4",
    candidate="gemm__x4_y2__x0n_y0m__f01__a-mc1x4_b-mc2x1_out-n",
    mapping=Mapping((MeshLevel("x", 0, 4, "tile_n"), MeshLevel("y", 0, 2, "tile_m"))),
    copies=(
        Copy(0, "a", "load", "multicast", (1, 4), "row", ("x0",)),
        Copy(1, "b", "load", "multicast", (2, 1), "column", ("y0",)),
        Copy(2, "out", "store", "unicast"),
    ),
    block_sizes={"tile_m": 128, "tile_n": 128, "tile_k": 64},
    pipeline={"loop:tile_k": {"b_load": 1, "b_store": 0}},
    l1_bytes=200_000,
    l1_capacity_bytes=1_000_000,
    modeled_cycles=20_000,
    modeled_us=20.0,
    modeled_tflops=1.68,
    bottleneck={
        "node": "root > loop:tile_k > load",
        "term": "DRAM read of b",
        "kind": "dram",
        "share": "0.600",
        "text": "DRAM read of b [dram] in root > loop:tile_k > load: 60% of the modeled time",
    },
    binding_constraints=("tile_k = 128 would violate: L1 footprint (needs 1,200,000 bytes)",),
    top_k=(
        TopEntry("gemm__x4_y2__x0n_y0m__f01__a-mc1x4_b-mc2x1_out-n", {}, {}, 20_000),
        TopEntry("gemm__x2_y4__x0m_y0n__f01__a-mc4x1_b-mc1x2_out-n", {}, {}, 25_000),
    ),
    neighbourhood={"configurations": 9, "rank_of_solution": 1},
    candidates_total=40,
    candidates_after_pruning=30,
    waves={"tile_m": 1, "tile_n": 1},
)


@pytest.fixture(scope="module")
def wormhole():  # type: ignore[no-untyped-def]
    return load_arch("wormhole_n150")


def test_mesh_labels_used_and_idle_cores(wormhole) -> None:  # type: ignore[no-untyped-def]
    view = compact_view(SCHEDULE, wormhole)
    cells = [c for row in view.mesh for c in row]
    assert len(view.mesh) == 8 and len(cells) == 64
    used = [c.label for c in cells if c.label]
    assert sorted(used) == sorted(f"m{m}n{n}" for m in range(2) for n in range(4))
    assert view.mesh[1][3].label == "m1n3" and view.mesh[0][4].label == ""
    assert "tile_m (2 cores, 1 wave(s))" in view.legend
    assert dict(view.facts)["load a"] == "multicast to 1x4 cores"
    assert dict(view.facts)["pipe loop:tile_k"] == "double-buffered inputs"
    assert dict(view.facts)["binding"].startswith("tile_k = 128 would violate")
    assert [r.label for r in view.timing] == ["modeled"] and view.note


def test_render_escapes_and_shows_simulated_after_a_run(wormhole) -> None:  # type: ignore[no-untyped-def]
    odd = dataclasses.replace(SCHEDULE, candidate="<script>alert(1)</script>")
    html = render_compact(compact_view(odd, wormhole))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.count("<td title=") == 64 and "Not simulated yet" in html

    class Sim:  # the two fields the view reads from a SimResult
        cycles, us, tflops = 25_000.0, 25.0, 1.3

    html = render_compact(compact_view(SCHEDULE, wormhole, Sim(), flops=2 * 256 * 512 * 128))  # type: ignore[arg-type]
    assert "simulated / modeled" in html and "1.25" in html and "Not simulated" not in html


def test_explain_names_every_decision(wormhole) -> None:  # type: ignore[no-untyped-def]
    solutions = [
        Solution(SCHEDULE.candidate, "optimal", cycles=20_000),
        Solution("other", "pruned"),
        Solution("third", "infeasible", reason="L1"),
    ]
    text = explain(SCHEDULE, wormhole, solutions)
    assert "found 40 legal spatial mappings, kept 30" in text
    assert "solved 2 with CP-SAT; 1 were cut off" in text and "1 had no legal block sizes" in text
    assert "uses 8 cores (2 rows x 4 columns, core view x4_y2)" in text
    assert "modeled 25.0% slower" in text
    assert "None is larger because tile_k = 128 would violate: L1 footprint" in text
    assert "a is read from DRAM once per group of 1x4 cores and multicast along x0" in text
    assert "out is written to DRAM by every core on its own" in text
    assert "The loop:tile_k pipe overlaps loads with compute" in text
    assert "dominated by DRAM read of b (dram) in root > loop:tile_k > load: 60%" in text
    assert "200,000 of its 1,000,000 usable L1 bytes (20%)" in text
