"""Per-core breakdown of one attention case: Loom's pick against a TTNN baseline.

Where Loom loses a flash attention cell of `loom eval`, the per-core figures say why:
whether the busiest core does more work than the average one (load imbalance: causal
work grows with the query tile), or every core does more work per step (the per-step
compute), or the cores wait for data (busy fraction well under 1). For Loom's pick and
for the baseline (`loom eval`'s own lowered program, `loom.eval.run.baseline_program`)
it prints the compute engine's busy cycles per core (min, mean, max), when the cores
finish, every engine's busy fraction, the DRAM bytes, and the ratio of the two runs.

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attention_cores.py \\
        [--kernel flash_attention_causal] [--arch wormhole_n150] [--shape B=1,H=8,S=2048,D=64] \\
        [--baseline ttnn-sdpa-tuned]

About 2 minutes of CPU at the default shape (the tuned baseline simulates each of its
candidates).
"""

from __future__ import annotations

import argparse
import statistics

from loom.arch import load_arch
from loom.eval.cases import case
from loom.eval.run import baseline_program
from loom.flows.helion import CompileOptions, compile_kernel
from loom.kernels.registry import parse_shape, resolve_kernel
from loom.sim import SimResult, simulate


def describe(name: str, sim: SimResult) -> None:
    """The per-core lines of one simulation."""
    compute = [c for c in sim.core_busy if c.engine == "compute"]
    busy = [c.busy * sim.kernel_cycles for c in compute]
    done = [c.finished_cycles for c in compute]
    print(f"{name}: {sim.cycles:,.0f} cycles on {len(compute)} cores")
    print(
        f"  compute busy cycles per core: min {min(busy):,.0f}  mean "
        f"{statistics.mean(busy):,.0f}  max {max(busy):,.0f}  (max / mean "
        f"{max(busy) / statistics.mean(busy):.2f})"
    )
    mean = statistics.mean(done)
    print(f"  cores finish: min {min(done):,.0f}  mean {mean:,.0f}  max {max(done):,.0f}")
    for e in sim.engine_busy:
        print(f"  {e.engine:8} busy: min {e.min:.2f}  mean {e.mean:.2f}  max {e.max:.2f}")
    print(f"  DRAM read {sim.bytes_moved.dram_read / 1e6:.1f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default="flash_attention_causal")
    ap.add_argument("--arch", default="wormhole_n150")
    ap.add_argument("--shape", default="B=1,H=8,S=2048,D=64")
    ap.add_argument("--baseline", default="ttnn-sdpa-tuned")
    args = ap.parse_args()
    spec, arch = resolve_kernel(args.kernel), load_arch(args.arch)
    shape = parse_shape(args.shape, spec)
    result = compile_kernel(spec, CompileOptions(arch=arch, shape=shape, jobs=1, top_k=1))
    loom = simulate(result.lowered.lowered, arch)
    blocks = " ".join(f"{k}={v}" for k, v in sorted(result.schedule.block_sizes.items()))
    describe(f"loom {result.schedule.candidate} [{blocks}]", loom)
    modeled = result.schedule.modeled_cycles
    print(f"  modeled {modeled:,} (sim / model {loom.cycles / modeled:.3f})")
    base = simulate(baseline_program(case(args.kernel, args.arch, shape), args.baseline), arch)
    describe(args.baseline, base)
    print(f"loom / {args.baseline}: {base.cycles / loom.cycles:.3f}x")


if __name__ == "__main__":
    main()
