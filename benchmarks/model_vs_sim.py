"""How well the latency model ranks schedules: the model's top-k, each simulated.

For every kernel, architecture and shape below, compile, then lower and simulate each of
the top-k schedules the solver ranked (the winner and its runners-up, each with its own
optimal block sizes). Prints modeled and simulated cycles per entry, their ratio, and
whether the model's pick is also the simulator's fastest of the k; the summary gives the
median ratio and how much slower the pick is than the simulator's best (the cost of the
model's misranking, measured on the simulator that stands in for the chip).

    PYTHONPATH=src .venv/bin/python benchmarks/model_vs_sim.py [--top-k 5] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import statistics

os.environ.setdefault("OMP_NUM_THREADS", "1")

import loom
from bench_util import shape_text

CASES = (
    ("gemm", "wormhole_n150", {"M": 4096, "N": 4096, "K": 4096}),
    ("gemm", "blackhole_12x10", {"M": 4096, "N": 4096, "K": 4096}),
    ("gemm", "wormhole_n150", {"M": 2048, "N": 2048, "K": 2048}),
    ("gemm", "blackhole_12x10", {"M": 2048, "N": 2048, "K": 2048}),
    ("flash_attention", "wormhole_n150", {"B": 1, "H": 8, "S": 2048, "D": 64}),
    ("flash_attention", "blackhole_12x10", {"B": 1, "H": 8, "S": 2048, "D": 64}),
    ("flash_decode", "wormhole_n150", {"B": 1, "H": 8, "S": 8192, "D": 64}),
    ("flash_decode", "blackhole_12x10", {"B": 1, "H": 8, "S": 8192, "D": 64}),
)


def run_case(kernel: str, arch: str, shape: dict[str, int], top_k: int, jobs: int):  # type: ignore[no-untyped-def]
    ck = loom.compile(kernel, shape=shape, arch=arch, jobs=jobs, top_k=top_k)
    rows = []
    for alt in ck.alternatives():
        s = alt.schedule
        sim = alt.simulate(trace=False)
        rows.append((s.candidate, s.block_sizes, s.modeled_cycles, sim.cycles))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    ratios: list[float] = []
    regrets: list[float] = []
    for kernel, arch, shape in CASES:
        rows = run_case(kernel, arch, shape, args.top_k, args.jobs)
        best_sim = min(r[3] for r in rows)
        print(f"\n=== {kernel} on {arch}, {shape_text(shape)} ===")
        print(f"{'rank':>4}  {'modeled':>11}  {'simulated':>11}  {'sim/model':>9}  candidate")
        for i, (cand, blocks, modeled, simulated) in enumerate(rows, 1):
            mark = "  <- simulator's fastest" if simulated == best_sim else ""
            sizes = ",".join(str(v) for v in blocks.values())
            print(
                f"{i:>4}  {modeled:>11,}  {simulated:>11,.0f}  {simulated / modeled:>9.2f}  "
                f"{cand} [{sizes}]{mark}"
            )
        regret = rows[0][3] / best_sim - 1
        ratios.append(rows[0][3] / rows[0][2])
        regrets.append(regret)
        print(f"--- the model's pick is {100 * regret:.1f}% slower than the simulator's best")
    print(
        f"\n>>> {len(CASES)} cases: sim/model of the pick median {statistics.median(ratios):.2f} "
        f"(range {min(ratios):.2f}-{max(ratios):.2f}); pick vs simulator's best of the top "
        f"{args.top_k}: median {100 * statistics.median(regrets):.1f}% slower, "
        f"worst {100 * max(regrets):.1f}%"
    )


if __name__ == "__main__":
    main()
