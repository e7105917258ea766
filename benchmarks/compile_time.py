"""Compile time of `loom compile` per shape: in-process (after imports) and whole-process.

GEMM over the paper's 18 shapes (M, N in {256, 2048, 16384} with N <= M, K in {256, 2048,
16384}), flash attention over the paper's Wormhole set (batch*heads x sequence = 16384,
head dim 64 and 128) and flash decode (32 heads, batch 8/16/24, KV length 1024-4096,
head dim 64), on wormhole_n150 and blackhole_12x10.

In-process: the median of `--repeats` compiles in one Python process after the imports
(Helion's import alone takes ~6 s), each a full compile: Helion bind, dataflow, mapping,
one CP-SAT problem per surviving candidate, ranking, lowering. Whole-process: the median
wall time of `loom compile ... --json` in a fresh process, for one shape per kernel
and architecture (the full cost a user pays, imports included). The in-process CPU time
is printed too: on a shared machine it is the figure that does not grow with the load
(with --jobs 1 it equals the wall time of a quiet machine).

`--dump FILE` writes what each compile chose, one JSON line per shape (the schedule
without its compile time, and `explain()`), so that a change meant only to make
compiling faster can be checked to choose the same (`diff` two dumps, each made with its
own source tree on PYTHONPATH). `--shapes N` keeps every kernel's first N shapes.

    PYTHONPATH=src .venv/bin/python benchmarks/compile_time.py [--repeats 3] [--jobs 2]
        [--kernels gemm,flash_attention,flash_decode] [--archs wormhole_n150,blackhole_12x10]
        [--shapes N] [--dump FILE] [--no-whole-process]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import loom
from bench_util import shape_text

ARCHS = ("wormhole_n150", "blackhole_12x10")
SIZES = (256, 2048, 16384)
GEMM = [{"M": m, "N": n, "K": k} for m, n, k in itertools.product(SIZES, SIZES, SIZES) if n <= m]
FLASH_ATTENTION = [
    {"B": b, "H": 1, "S": 16384 // b, "D": d} for d in (64, 128) for b in (1, 2, 4, 8, 16)
]
FLASH_DECODE = [{"B": b, "H": 32, "S": s, "D": 64} for b in (8, 16, 24) for s in (1024, 2048, 4096)]
SHAPES = {"gemm": GEMM, "flash_attention": FLASH_ATTENTION, "flash_decode": FLASH_DECODE}
WHOLE_PROCESS = {
    "gemm": {"M": 2048, "N": 2048, "K": 2048},
    "flash_attention": {"B": 4, "H": 1, "S": 4096, "D": 64},
    "flash_decode": {"B": 8, "H": 32, "S": 2048, "D": 64},
}


def chosen(kernel: str, arch: str, compiled: loom.CompiledKernel) -> str:
    """What a compile chose, as one JSON line: the schedule (its compile time left out)
    and the explanation."""
    data = json.loads(compiled.schedule.to_json())
    del data["compile_seconds"]
    line = {"kernel": kernel, "arch": arch, "schedule": data, "explain": compiled.explain()}
    return json.dumps(line, sort_keys=True)


def in_process(
    kernel: str, shape: dict[str, int], arch: str, repeats: int, jobs: int
) -> tuple[float, float, str, loom.CompiledKernel]:
    target = loom.load_arch(arch)
    times, cpu, last = [], [], None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        last = loom.compile(kernel, shape=shape, arch=target, jobs=jobs)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    assert last is not None
    s = last.schedule
    # handed to the solver: the rest were pruned by a bound or infeasible before solving
    solved = sum(1 for c in last.candidates if c.status in ("optimal", "feasible", "unknown"))
    share = 1 - solved / max(s.candidates_total, 1)
    note = (
        f"cpu {statistics.median(cpu):6.2f} s  {s.candidates_total:>5} legal "
        f"{s.candidates_after_pruning:>5} cand {solved:>4} solved "
        f"({100 * share:5.1f}% pruned)  {s.modeled_tflops:8.2f} TFLOPS"
    )
    return statistics.median(times), statistics.median(cpu), note, last


def whole_process(kernel: str, shape: dict[str, int], arch: str, repeats: int, jobs: int) -> float:
    loom = Path(sys.executable).with_name("loom")
    cmd = [
        str(loom),
        "compile",
        kernel,
        "--arch",
        arch,
        "--shape",
        shape_text(shape),
        "--json",
        "--jobs",
        str(jobs),
    ]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--kernels", default="gemm,flash_attention,flash_decode")
    parser.add_argument("--archs", default=",".join(ARCHS))
    parser.add_argument("--shapes", type=int, default=0, help="each kernel's first N shapes")
    parser.add_argument("--dump", type=Path, help="write what each compile chose (JSON lines)")
    parser.add_argument("--no-whole-process", action="store_true")
    args = parser.parse_args()
    archs = args.archs.split(",")
    dump = args.dump.open("w") if args.dump else None
    print(f"compile time, median of {args.repeats} in-process runs, --jobs {args.jobs}")
    for kernel in args.kernels.split(","):
        for arch in archs:
            medians, cpus = [], []
            print(f"\n{kernel} on {arch}")
            for shape in SHAPES[kernel][: args.shapes or None]:
                median, cpu, note, last = in_process(kernel, shape, arch, args.repeats, args.jobs)
                medians.append(median)
                cpus.append(cpu)
                print(f"  {shape_text(shape):28} {median:6.2f} s   {note}", flush=True)
                if dump is not None:
                    dump.write(chosen(kernel, arch, last) + "\n")
            print(
                f"  median over {len(medians)} shapes: {statistics.median(medians):.2f} s "
                f"(min {min(medians):.2f}, max {max(medians):.2f}); cpu "
                f"{statistics.median(cpus):.2f} s (min {min(cpus):.2f}, max {max(cpus):.2f})"
            )
    if dump is not None:
        dump.close()
    if args.no_whole_process:
        return
    print("\nwhole process (imports included), median of runs:")
    for kernel in args.kernels.split(","):
        for arch in archs:
            t = whole_process(kernel, WHOLE_PROCESS[kernel], arch, args.repeats, args.jobs)
            print(f"  {kernel:16} {arch:16} {shape_text(WHOLE_PROCESS[kernel]):24} {t:6.2f} s")


if __name__ == "__main__":
    main()
