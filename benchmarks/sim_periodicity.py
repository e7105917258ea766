"""Does the machine's state repeat on the paper-evaluation workloads? The bound on any
steady-state fast-forward of the simulator.

For each workload (a baseline policy's program, lowered as `loom eval` lowers it, or a
hand-built GEMM) the simulation runs once with loom.sim.periodicity's probe: the
machine's state (every engine's place in its program, buffer occupancies, flows in
flight with remaining bytes and rates, pending events, pipe rendezvous; times and bytes
rounded to the cycle and the byte) is taken at each request of the first engine. Prints
how many of those states repeat an earlier one, the first repeat and its period, the
spread of the cores' finishing cycles, and the speed-up bound: the full simulation's
events over those a perfect fast-forward would still simulate (up to the first repeat,
plus one period at the end).

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sim_periodicity.py [--big]

`--big` adds flash attention at the evaluation's size (1/8 of the paper's tokens), the
largest flash decode case and GEMM 16384^3 with TTNN's default configuration (minutes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sim"))

from sim_programs import GemmConfig, gemm_program

from loom.arch import load_arch
from loom.ir.program import Program
from loom.sim.periodicity import measure_periodicity
from sim_solve import lowered

WH, BH = "wormhole_n150", "blackhole_p150_13x10"
Workload = tuple[str, str, dict[str, int], str]
SMALL: tuple[Workload, ...] = (
    ("flash_attention", WH, {"B": 2, "H": 8, "S": 512, "D": 64}, "ttnn-sdpa"),
    ("flash_attention_causal", WH, {"B": 2, "H": 8, "S": 512, "D": 128}, "ttnn-sdpa"),
    ("flash_decode", WH, {"B": 8, "H": 32, "S": 1024, "D": 64}, "ttnn-sdpa-decode"),
    ("gemm", WH, {"M": 2048, "N": 2048, "K": 2048}, "ttnn-matmul-oob"),
    ("gemm", BH, {"M": 2048, "N": 2048, "K": 2048}, "ttnn-matmul-oob"),
)
BIG: tuple[Workload, ...] = (
    ("flash_attention", WH, {"B": 1, "H": 8, "S": 2048, "D": 64}, "ttnn-sdpa"),
    ("flash_decode", BH, {"B": 30, "H": 32, "S": 4096, "D": 128}, "ttnn-sdpa-decode"),
    ("gemm", WH, {"M": 16384, "N": 16384, "K": 16384}, "ttnn-matmul-oob"),
)
FIXTURES = {
    "hand-built gemm 2048^3, multicast": GemmConfig(2048, 2048, 2048, (8, 8), 8, 8, 2),
    "hand-built gemm 2048^3, unicast": GemmConfig(2048, 2048, 2048, (8, 8), 8, 8, 2, mcast=False),
}


def report(name: str, program: Program, arch: str) -> None:
    start = time.process_time()
    p = measure_periodicity(program, load_arch(arch))
    cpu = time.process_time() - start
    if p.first_seen is None or p.first_repeat is None:
        where = "never"
    else:
        where = (
            f"{100 * p.first_repeat / p.cycles:5.1f}% in, period "
            f"{100 * p.period_cycles / p.cycles:5.1f}% ({p.period_events:,} events)"
        )
    print(
        f"{name:62s} {p.boundaries:>7,} {p.repeats:>7,} {p.discrete_repeats:>7,}  "
        f"{100 * p.finish_spread:5.1f}%  {p.speedup_bound:6.2f}x  {cpu:6.1f}s  {where}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="add the minutes-long workloads")
    args = parser.parse_args()
    print(
        f"{'workload':62s} {'states':>7s} {'repeat':>7s} {'discr.':>7s}  {'spread':>6s}  "
        f"{'bound':>7s}  {'cpu':>7s}  first repeat"
    )
    for name, cfg in FIXTURES.items():
        report(f"{name} {WH}", gemm_program(cfg), WH)
    for kernel, arch, shape, policy in SMALL + (BIG if args.big else ()):
        dims = ",".join(f"{k}={v}" for k, v in shape.items())
        name = f"{kernel} {'WH' if arch == WH else 'BH'} {dims} {policy}"
        report(name, lowered(kernel, arch, shape, policy), arch)


if __name__ == "__main__":
    main()
