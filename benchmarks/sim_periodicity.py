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

from sim_programs import GemmConfig, dram_read_program, gemm_program, pipe_program

from bench_util import shape_text
from loom.arch import load_arch
from loom.flows.cuda import CudaOptions, compile_cuda, launches
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


def fixtures() -> dict[str, tuple[str, Program]]:
    """Hand-built programs: two GEMMs and the pinned ones of tests/sim."""

    def gemm(*args: object, **kw: object) -> Program:
        return gemm_program(GemmConfig(*args, **kw))  # type: ignore[arg-type]

    return {
        "gemm 2048^3 multicast": (WH, gemm(2048, 2048, 2048, (8, 8), 8, 8, 2)),
        "gemm 2048^3 unicast": (WH, gemm(2048, 2048, 2048, (8, 8), 8, 8, 2, mcast=False)),
        "pinned gemm_wh_mcast": (WH, gemm(1024, 1024, 1024, (8, 8), 4, 4, 4)),
        "pinned gemm_wh_unicast": (WH, gemm(1024, 512, 1024, (8, 8), 4, 2, 2, mcast=False)),
        "pinned gemm_wh_split": (
            WH,
            gemm(
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
            ),
        ),
        "pinned gemm_bh_mcast": (BH, gemm(1280, 1024, 1024, (10, 8), 4, 4, 4)),
        "pinned dram_read_bh": (
            BH,
            dram_read_program((4, 8), blocks=6, block_rows=2, block_cols=4),
        ),
        "pinned pipe_wh": (WH, pipe_program((1, 8), blocks=6, block_tiles=4, cols=8)),
    }


def cuda(name: str, n: int) -> list[tuple[str, Program]]:
    """Launches of a CUDA example (blackhole, fp32; first and last host-loop step)."""
    defines = (("N", str(n)), ("TSTEPS", "2")) if name == "jacobi_2d" else (("N", str(n)),)
    compiled = compile_cuda(f"examples/cuda/{name}.cu", CudaOptions(load_arch(BH), "fp32", defines))
    return [(f"cuda {name} N={n} launch {i}", lp.program) for i, lp in launches(compiled, 2)]


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
    for name, (arch, program) in fixtures().items():
        report(f"hand-built {name} {'WH' if arch == WH else 'BH'}", program, arch)
    for name, program in cuda("jacobi_2d", 1024)[:2] + cuda("gaussian", 512)[:2]:
        report(f"{name} BH", program, BH)
    for kernel, arch, shape, policy in SMALL + (BIG if args.big else ()):
        name = f"{kernel} {'WH' if arch == WH else 'BH'} {shape_text(shape)} {policy}"
        report(name, lowered(kernel, arch, shape, policy), arch)


if __name__ == "__main__":
    main()
