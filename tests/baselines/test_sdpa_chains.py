"""TTNN's K/V chains for non-causal SDPA (sdpa_program_factory.cpp @ 000e7c05 with
sdpa_chain_utils.hpp @ 2c741005): which heads get a chain, where it starts, which core
injects, and whether the injectors multicast (all chains or none); and the ttnn-sdpa
Schedule that follows from it."""

from __future__ import annotations

import functools

import pytest

from loom.arch import load_arch
from loom.baselines.build import copies_of, mapping_of
from loom.baselines.sdpa_chains import ChainPlan, chain_plan, core_work
from loom.baselines.ttnn_sdpa import sdpa_policy, sdpa_split
from loom.flows.helion import run_frontend
from loom.flows.stages import StageLog
from loom.ir.tile import TileProgram
from loom.kernels.registry import resolve_kernel

WH, BH = "wormhole_n150", "blackhole_p150_13x10"


def _plan(arch_name: str, b: int, h: int, s: int, causal: bool = False) -> ChainPlan:
    arch = load_arch(arch_name)
    grid = (arch.grid_x, arch.grid_y)
    work = core_work(b, h, s, grid, 32, sdpa_split(b, h, s, grid[0] * grid[1]))
    return chain_plan(work, h, grid[0], causal, tuple(arch.worker_noc_x))


@functools.cache
def _program() -> TileProgram:
    return run_frontend(
        resolve_kernel("flash_attention"), {"B": 1, "H": 2, "S": 256, "D": 64}, StageLog()
    )


def _copies(arch_name: str, shape: dict[str, int]) -> dict[str, tuple[str, tuple[int, int]]]:
    """Each load's (mode, area) under the non-causal ttnn-sdpa policy for `shape` (the
    kernel's access pattern does not depend on its shape: one small trace serves all)."""
    arch = load_arch(arch_name)
    policy = sdpa_policy(shape, (arch.grid_x, arch.grid_y), False, tuple(arch.worker_noc_x))
    copies = copies_of(_program(), mapping_of(policy.view), policy.multicast)
    return {c.tensor: (c.mode, c.area) for c in copies if c.kind == "load"}


def test_wormhole_heads_in_one_row_each_multicast_along_it() -> None:
    """8x8, B=1, H=8, S=2048: 8 heads x 8 q-parallel cores, head h on cores 8h..8h+7 (row
    h, 8 chunks each): 8 chains, all in one row, no gap, equal counts -> multicast. The
    first injector is the first core; each next one is the column whose NoC x (1,2,3,4,
    6,7,8,9) is furthest from the injectors so far, the first on ties: x 7 (NoC 9), x 3
    (NoC 4, 3 from NoC 1; x 4 ties), x 4 (NoC 6, 2 from NoC 4; x 5 ties)."""
    plan = _plan(WH, 1, 8, 2048)
    assert plan.multicast and plan.why_not == ""
    assert [sorted(c.cores) for c in plan.chains] == [
        list(range(8 * h, 8 * h + 8)) for h in range(8)
    ]
    assert [c.injector % 8 for c in plan.chains[:4]] == [0, 7, 3, 4]
    assert plan.chains[1].cores == (15, 9, 10, 11, 12, 13, 14, 8)  # swapped to the front
    view = sdpa_policy({"B": 1, "H": 8, "S": 2048, "D": 64}, (8, 8), False).view
    assert view == (("x", 8, "tile_m"), ("x", 1, "tile_b"), ("y", 1, "tile_m"), ("y", 8, "tile_b"))
    copies = _copies(WH, {"B": 1, "H": 8, "S": 2048, "D": 64})
    assert copies["k"] == copies["v"] == ("multicast", (1, 8))
    assert copies["q"] == ("unicast", (1, 1))


def test_wormhole_two_heads_per_row_multicast_over_four_cores() -> None:
    """8x8, B=2, H=8, S=1024: qpf 4, heads on cores 4g..4g+3, two per row -> 16 row
    chains of 4, multicast; Loom writes TTNN's placement (4 query cores then 2 heads
    along x, 8 heads down y) and multicasts over each head's 4."""
    plan = _plan(WH, 2, 8, 1024)
    assert plan.multicast
    assert len(plan.chains) == 16 and {len(c.cores) for c in plan.chains} == {4}
    shape = {"B": 2, "H": 8, "S": 1024, "D": 128}
    view = sdpa_policy(shape, (8, 8), False).view
    assert view == (("x", 4, "tile_m"), ("x", 2, "tile_b"), ("y", 1, "tile_m"), ("y", 8, "tile_b"))
    assert _copies(WH, shape)["k"] == ("multicast", (1, 4))


def test_blackhole_heads_across_two_rows_store_and_forward() -> None:
    """13x10, B=1, H=8, S=1920: qpf 130 // 8 = 16, 60 chunks -> 4 per core, so 15 cores
    work per head (the 16th gets none): head 0 on cores 0..14 runs over row 0 and two
    cores of row 1 -> no multicast for any head (all or nothing): unicast chains of 15.
    Loom has no chain: it multicasts over each head's 15 cores as a 3 x 5 rectangle,
    which reads K/V from DRAM as often as TTNN's injectors (8 heads x 4 chunks)."""
    plan = _plan(BH, 1, 8, 1920)
    assert not plan.multicast and "spans 2 core rows" in plan.why_not
    assert [sorted(c.cores) for c in plan.chains] == [
        list(range(16 * h, 16 * h + 15)) for h in range(8)
    ]
    assert all(c.q_counts == (4,) * 15 for c in plan.chains)
    shape = {"B": 1, "H": 8, "S": 1920, "D": 64}
    policy = sdpa_policy(shape, (13, 10), False)
    assert policy.view == (
        ("x", 3, "tile_m"),
        ("x", 4, "tile_b"),
        ("y", 5, "tile_m"),
        ("y", 2, "tile_b"),
    )
    assert "32 K/V DRAM passes; here multicast over 5x3 cores per head, 32 K/V" in policy.notes[1]
    assert _copies(BH, shape)["v"] == ("multicast", (5, 3))


def test_unequal_query_counts_run_heaviest_first_and_block_multicast() -> None:
    """13x10, B=2, H=8, S=960: 30 chunks over qpf 8 -> 4 per core, the eighth core 2:
    head 0 lies in row 0 with no gap, but its counts differ -> no multicast; the chain
    runs its cores heaviest first (stable), the 2-chunk core last."""
    plan = _plan(BH, 2, 8, 960)
    assert not plan.multicast and "unequal query-chunk counts" in plan.why_not
    assert plan.chains[0].cores == tuple(range(8))
    assert plan.chains[0].q_counts == (4,) * 7 + (2,)


def test_one_ineligible_chain_turns_multicast_off_for_all() -> None:
    """8x8, B=1, H=10, S=192: qpf 64 // 10 = 6, 6 chunks -> one each; head 0 (cores 0..5)
    sits in row 0, but head 1 (cores 6..11) runs into row 1, so no chain multicasts."""
    plan = _plan(WH, 1, 10, 192)
    assert plan.chains[0].cores == (0, 1, 2, 3, 4, 5)
    assert not plan.multicast and plan.why_not.startswith("head 1's")


@pytest.mark.parametrize(("b", "h", "s"), [(8, 32, 1024), (64, 2, 512)])
def test_heads_on_one_core_build_no_chain(b: int, h: int, s: int) -> None:
    """8x8, B=8, H=32: batch 8 x heads 8 parallel, so each core takes 4 whole heads
    (qpf 1); B=64: one batch per core. No head spans two cores: no chain, K/V unicast."""
    assert sdpa_split(b, h, s, 64)[2] == 1
    assert _plan(WH, b, h, s) == ChainPlan((), False)
    policy = sdpa_policy({"B": b, "H": h, "S": s, "D": 64}, (8, 8), False)
    assert policy.multicast == ()


def test_causal_keeps_unicast_on_ttnn_placement() -> None:
    """TTNN builds chains for non-causal runs only: the causal kernel reads K/V per core,
    on every core of the grid, each taking a contiguous zigzag run of the flat work."""
    shape = {"B": 1, "H": 8, "S": 2048, "D": 64}
    assert _plan(WH, 1, 8, 2048, causal=True) == ChainPlan((), False)
    causal = sdpa_policy(shape, (8, 8), True)
    assert causal.multicast == ()
    assert causal.view == (("x", 8, "tile_m"), ("y", 8, "tile_m"))
    assert causal.deal == "zigzag" and sdpa_policy(shape, (8, 8), False).deal == ""
    assert "no chain" in causal.notes[1]
