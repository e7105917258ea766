"""The simulator's two rate solves side by side on the paper-evaluation workloads.

For each workload (a baseline policy's program, lowered as `loom eval` lowers it) the
same Program is simulated twice in this process: with the NumPy progressive filling
and with the Numba-compiled kernel (loom.sim.fill_jit). Prints CPU seconds of each,
the ratio, and whether the two agree bit for bit (cycles, busiest link, bytes moved);
they must. The compiled kernel is compiled (or loaded from its cache) before timing.

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sim_solve.py [--big]

`--big` adds the slow ones: flash attention at the evaluation's size (1/8 of the
paper's tokens), the largest flash decode case and a 16384^3 GEMM (minutes each).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from bench_util import shape_text
from loom.arch import load_arch
from loom.eval.cases import case
from loom.eval.run import baseline_program
from loom.ir.program import Program
from loom.sim import SimResult, network, simulate
from loom.sim.fill_jit import compiled_filling

WH, BH = "wormhole_n150", "blackhole_p150_13x10"
SMALL = (
    ("flash_attention", WH, {"B": 2, "H": 8, "S": 512, "D": 64}, "ttnn-sdpa"),
    ("flash_decode", WH, {"B": 8, "H": 32, "S": 1024, "D": 64}, "ttnn-sdpa-decode"),
    ("gemm", WH, {"M": 2048, "N": 2048, "K": 2048}, "ttnn-matmul-oob"),
)
BIG = (
    ("flash_attention", WH, {"B": 1, "H": 8, "S": 2048, "D": 64}, "ttnn-sdpa"),
    ("flash_decode", BH, {"B": 30, "H": 32, "S": 4096, "D": 128}, "ttnn-sdpa-decode"),
    ("gemm", WH, {"M": 16384, "N": 16384, "K": 16384}, "ttnn-matmul-oob"),
)


def lowered(kernel: str, arch: str, shape: dict[str, int], policy: str) -> Program:
    """The program `loom eval` simulates for this baseline policy."""
    return baseline_program(case(kernel, arch, shape), policy)


def timed(program: Program, arch: str, compiled: bool) -> tuple[float, SimResult]:
    original = network.compiled_fill_into
    if not compiled:
        network.compiled_fill_into = lambda: None
    try:
        start = time.process_time()
        result = simulate(program, load_arch(arch))
        return time.process_time() - start, result
    finally:
        network.compiled_fill_into = original


def fingerprint(r: SimResult) -> tuple[object, ...]:
    busiest = r.link_utilization[0].utilization if r.link_utilization else 0.0
    return (r.cycles, busiest, dataclasses.astuple(r.bytes_moved), r.events, r.rate_solves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="add the minutes-long workloads")
    args = parser.parse_args()
    if compiled_filling() is None:
        raise SystemExit("Numba is not installed (or LOOM_SIM_NO_JIT is set): nothing to compare")
    print(f"{'workload':58s} {'numpy s':>8s} {'numba s':>8s} {'speed-up':>8s}  same bits")
    for kernel, arch, shape, policy in SMALL + (BIG if args.big else ()):
        program = lowered(kernel, arch, shape, policy)
        t_np, r_np = timed(program, arch, compiled=False)
        t_jit, r_jit = timed(program, arch, compiled=True)
        name = f"{kernel} {arch} {shape_text(shape)} {policy}"
        same = fingerprint(r_np) == fingerprint(r_jit)
        print(f"{name:58s} {t_np:8.2f} {t_jit:8.2f} {t_np / t_jit:7.2f}x  {same}")
        print(f"{'':58s} {r_jit.events:,} events, {r_jit.rate_solves:,} rate solves")


if __name__ == "__main__":
    main()
