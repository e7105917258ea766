"""Pinned simulated cycle counts: the simulator's speed work must not move a single bit.

Each program is a hand-built one (tests/sim/sim_programs.py) that exercises many flows
sharing links, DRAM banks and multicast trees; its cycles, event count and bytes moved
are compared exactly (repr of the float), not approximately. A deliberate change of the
simulated machine (a new calibration, a fairer rate model) updates the table below in the
same commit and says why.
"""

from __future__ import annotations

import pytest
from sim_programs import GemmConfig, dram_read_program, gemm_program, pipe_program

from loom.arch import load_arch
from loom.ir.program import Program
from loom.sim import simulate

WH, BH = "wormhole_n150", "blackhole_p150_13x10"


def _programs() -> dict[str, tuple[str, Program]]:
    return {
        "gemm_wh_mcast": (WH, gemm_program(GemmConfig(1024, 1024, 1024, (8, 8), 4, 4, 4))),
        "gemm_wh_unicast": (
            WH,
            gemm_program(GemmConfig(1024, 512, 1024, (8, 8), 4, 2, 2, mcast=False)),
        ),
        "gemm_wh_split": (
            WH,
            gemm_program(
                GemmConfig(
                    1024,
                    1024,
                    256,
                    (8, 8),
                    2,
                    2,
                    2,
                    waves_m=2,
                    waves_n=2,
                    a_on_writer=True,
                    split_store=True,
                )  # fmt: skip
            ),
        ),
        "gemm_bh_mcast": (BH, gemm_program(GemmConfig(1280, 1024, 1024, (10, 8), 4, 4, 4))),
        "dram_read_bh": (BH, dram_read_program((4, 8), blocks=6, block_rows=2, block_cols=4)),
        "pipe_wh": (WH, pipe_program((1, 8), blocks=6, block_tiles=4, cols=8)),
    }


PINNED: dict[str, tuple[str, int, str]] = {
    # name: (repr(cycles), repr(busiest link's utilization), repr(bytes moved))
    "dram_read_bh": (
        "23445.477896687094",
        "0.6967886685056366",
        "BytesMoved(dram_read=3145728.0, dram_write=0.0, noc_unicast=0.0, noc_multicast=0.0, noc_multicast_delivered=0.0)",
    ),
    "gemm_bh_mcast": (
        "65986.28456486043",
        "0.563992714827118",
        "BytesMoved(dram_read=4718592.0, dram_write=2621440.0, noc_unicast=0.0, noc_multicast=4718592.0, noc_multicast_delivered=37224448.0)",
    ),
    "gemm_wh_mcast": (
        "93571.45333333332",
        "0.6902623047653578",
        "BytesMoved(dram_read=4194304.0, dram_write=2097152.0, noc_unicast=0.0, noc_multicast=4194304.0, noc_multicast_delivered=29360128.0)",
    ),
    "gemm_wh_split": (
        "53362.76443445461",
        "0.2995531090708201",
        "BytesMoved(dram_read=2097152.0, dram_write=2097152.0, noc_unicast=0.0, noc_multicast=2097152.0, noc_multicast_delivered=14680064.0)",
    ),
    "gemm_wh_unicast": (
        "187513.74276305988",
        "0.5108169840716639",
        "BytesMoved(dram_read=25165824.0, dram_write=1048576.0, noc_unicast=0.0, noc_multicast=0.0, noc_multicast_delivered=0.0)",
    ),
    "pipe_wh": (
        "10615.06",
        "0.8626800969026251",
        "BytesMoved(dram_read=0.0, dram_write=0.0, noc_unicast=0.0, noc_multicast=49152.0, noc_multicast_delivered=344064.0)",
    ),
}


@pytest.mark.parametrize("name", sorted(_programs()))
def test_simulated_cycles_are_pinned(name: str) -> None:
    arch, program = _programs()[name]
    r = simulate(program, load_arch(arch))
    got = (repr(r.cycles), repr(r.link_utilization[0].utilization), repr(r.bytes_moved))
    assert got == PINNED[name]
