"""Pinned simulated cycle counts: the simulator's speed work must not move a single bit.

Each program is a hand-built one (tests/sim/sim_programs.py) that exercises many flows
sharing links, DRAM banks and multicast trees; its cycles, event count and bytes moved
are compared exactly (repr of the float), not approximately. A deliberate change of the
simulated machine (a new calibration, a fairer rate model) updates the table below in the
same commit and says why.
"""

from __future__ import annotations

import dataclasses

import pytest
from sim_programs import GemmConfig, dram_read_program, gemm_program, pipe_program

from loom.arch import load_arch
from loom.ir.program import Program
from loom.sim import network, simulate

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
                )
            ),
        ),
        "gemm_bh_mcast": (BH, gemm_program(GemmConfig(1280, 1024, 1024, (10, 8), 4, 4, 4))),
        # The busiest links' utilization fell (cycles and bytes unchanged) when the network
        # dropped its load on emptying: no bytes are counted over the gaps with no flow.
        "dram_read_bh": (BH, dram_read_program((4, 8), blocks=6, block_rows=2, block_cols=4)),
        "pipe_wh": (WH, pipe_program((1, 8), blocks=6, block_tiles=4, cols=8)),
    }


PINNED: dict[str, tuple[float, float, tuple[float, ...]]] = {
    # name: (cycles, busiest link's utilization, bytes moved), compared with ==
    # The Wormhole GEMMs' output stores moved (+1..15%) with the banks' write efficiency
    # (dram.write_efficiency: interleaved writes hold a bank longer than reads, fitted on
    # the all-core rows of calibration/noc_latencies.yaml).
    # The busiest links' utilization fell (cycles and bytes unchanged) when the network
    # dropped its load on emptying: no bytes are counted over the gaps with no flow.
    "dram_read_bh": (23445.477896687094, 0.6093425311745184, (3145728.0, 0.0, 0.0, 0.0, 0.0)),
    "gemm_bh_mcast": (
        65986.28456486043,
        0.5517811902916765,
        (4718592.0, 2621440.0, 0.0, 4718592.0, 37224448.0),
    ),
    "gemm_wh_mcast": (
        97959.34795157617,
        0.6537459120549776,
        (4194304.0, 2097152.0, 0.0, 4194304.0, 29360128.0),
    ),
    "gemm_wh_split": (
        61230.500788075755,
        0.25751696994956486,
        (2097152.0, 2097152.0, 0.0, 2097152.0, 14680064.0),
    ),
    "gemm_wh_unicast": (
        189673.55673884795,
        0.5046998519257805,
        (25165824.0, 1048576.0, 0.0, 0.0, 0.0),
    ),
    "pipe_wh": (10615.06, 0.26792868753536336, (0.0, 0.0, 0.0, 49152.0, 344064.0)),
}


@pytest.mark.parametrize("solver", ["compiled", "numpy"])
@pytest.mark.parametrize("name", sorted(_programs()))
def test_simulated_cycles_are_pinned(
    name: str, solver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both rate solves (the Numba kernel and its NumPy twin) give the pinned bits."""
    if solver == "numpy":
        monkeypatch.setattr(network, "compiled_fill_into", lambda: None)
    arch, program = _programs()[name]
    r = simulate(program, load_arch(arch))
    got = (r.cycles, r.link_utilization[0].utilization, dataclasses.astuple(r.bytes_moved))
    assert got == PINNED[name]  # exactly: a float literal is the float it was printed from
