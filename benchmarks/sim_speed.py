"""How fast loom.sim simulates a 4096x4096x4096 GEMM on the Wormhole 8x8 grid.

Target: under 20 s per program on this machine. Prints wall time, events and events per
second for three lowerings of the same GEMM: TTNN's configuration (16x16-tile blocks per
core in 2x2 waves of 8x8, K blocks of 16 tiles, 2-D multicast), a fine-grained one
(K blocks of 2 tiles: 64 K steps) and the fine-grained one without multicast (every core
reads its own operands from DRAM). The Programs come from the temporary fixture builder
(tests/sim/sim_programs.py) until loom.lower exists.

    PYTHONPATH=src .venv/bin/python benchmarks/sim_speed.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sim"))

# Internals, not the public API: the simulator is timed on fixed hand-built Programs, so
# that its speed is measured apart from compile-time choices.
from sim_programs import GemmConfig, gemm_program

from loom.arch import load_arch
from loom.sim import simulate

N = 4096
CASES = {
    "ttnn config (bk=16, 2x2 waves)": GemmConfig(
        N, N, N, (8, 8), 8, 8, 16, waves_m=2, waves_n=2, a_on_writer=True, split_store=True
    ),
    "fine (bk=2, 64 K steps)": GemmConfig(
        N, N, N, (8, 8), 16, 16, 2, a_on_writer=True, split_store=True
    ),
    "fine, no multicast": GemmConfig(
        N, N, N, (8, 8), 16, 16, 2, mcast=False, a_on_writer=True, split_store=True
    ),
}


def main() -> None:
    arch = load_arch("wormhole_n150")
    for name, cfg in CASES.items():
        r = simulate(gemm_program(cfg), arch)
        print(
            f"{name:32s} {r.wall_seconds:6.2f} s  {r.events:>8,} events  "
            f"{r.events_per_second:>8,.0f} events/s  {r.rate_solves:>6,} rate solves  "
            f"-> {r.us:9.1f} us, {r.tflops:5.1f} TFLOPS"
        )


if __name__ == "__main__":
    main()
