"""Per-core breakdown of one evaluation case: Loom's pick against a TTNN baseline.

Where Loom loses a cell of `loom eval` (Table 2), the per-core figures say why: whether
the busiest core does more work than the average one (load imbalance: causal work grows
with the query tile), or every core does more work per step (the per-step compute), or
the cores wait for data (compute busy well under 1, reader busy near 1: DRAM or NoC
binds). For Loom's pick and for the baseline (`loom eval`'s own lowered program,
`loom.eval.run.baseline_program`) it prints the lowering's notes (mapping, waves per axis,
block sizes, L1), every engine's busy cycles per core (min, mean, max; compute, reader,
writer), when the cores finish, the DRAM bytes and bank use, which engine binds, and the
ratio of the two runs, with the DRAM rate as a share of the peak. GEMM, flash attention
(causal and not), flash decode and the layer ops (`benchmarks/families`: RMSNorm,
LayerNorm, softmax... against TTNN's own op; RMSNorm + residual has none) alike;
`--accumulate output` compiles Loom accumulating in the output's format, as TTNN's matmul
does (`loom eval` keeps the kernel's fp32 accumulator: `strict`).

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/core_breakdown.py \\
        [--kernel flash_attention_causal] [--arch wormhole_n150] [--shape B=1,H=8,S=2048,D=64] \\
        [--baseline ttnn-sdpa-tuned] [--accumulate output]

The baseline defaults to the kernel's tuned TTNN (`ttnn-matmul-tuned`, `ttnn-sdpa-tuned`,
`ttnn-sdpa-decode-tuned`), which simulates each of its candidates: about 2 minutes of CPU
for causal attention at the default shape; a layer op's is its TTNN op
(`loom.baselines.ttnn_layer.LAYER_BASELINES`), or none where TTNN's factory refuses the
shape.
"""

from __future__ import annotations

import argparse
import statistics

from loom.arch import Arch, load_arch
from loom.baselines.ttnn_layer import LAYER_BASELINES
from loom.errors import ScheduleError
from loom.eval.cases import FAMILIES_DIR, case, kernel_source
from loom.eval.run import baseline_program
from loom.flows.helion import CompileOptions, compile_kernel
from loom.ir.buffers import ACCUMULATE_POLICIES
from loom.ir.program import Program
from loom.kernels.registry import parse_shape, resolve_kernel
from loom.sim import SimResult, simulate

TUNED = {
    "gemm": "ttnn-matmul-tuned",
    "flash_attention": "ttnn-sdpa-tuned",
    "flash_attention_causal": "ttnn-sdpa-tuned",
    "flash_decode": "ttnn-sdpa-decode-tuned",
    **LAYER_BASELINES,
}
"""The default baseline per kernel: the tuned TTNN, usually the strongest (a layer op's
TTNN op, its own rule's variants simulated and the faster kept)."""


def _spread(values: list[float]) -> str:
    mean = statistics.mean(values)
    imbalance = max(values) / mean if mean else 1.0
    return (
        f"min {min(values):,.0f}  mean {mean:,.0f}  max {max(values):,.0f}"
        f"  (max / mean {imbalance:.2f})"
    )


def binding_engine(sim: SimResult) -> str:
    """The engine busiest on the busiest core: the one whose work bounds the run."""
    return max(sim.engine_busy, key=lambda e: e.max).engine


def describe(name: str, sim: SimResult, program: Program, arch: Arch) -> list[str]:
    """The per-core lines of one simulation of `program` on `arch`."""
    cores = {c.core for c in sim.core_busy}
    lines = [f"{name}: {sim.cycles:,.0f} cycles on {len(cores)} cores"]
    lines += [f"  {note}" for note in program.notes]
    for engine in sorted({c.engine for c in sim.core_busy}):
        busy = [c.busy * sim.kernel_cycles for c in sim.core_busy if c.engine == engine]
        lines.append(f"  {engine:8} busy cycles per core: {_spread(busy)}")
    done = [c.finished_cycles for c in sim.core_busy if c.engine == "compute"]
    lines.append(f"  cores finish: {_spread(done)}")
    for e in sim.engine_busy:
        lines.append(
            f"  {e.engine:8} busy fraction: min {e.min:.2f}  mean {e.mean:.2f}  max {e.max:.2f}"
        )
    banks = sim.dram_bank_utilization or (0.0,)
    moved = sim.bytes_moved
    lines.append(
        f"  DRAM read {moved.dram_read / 1e6:.1f} MB  write {moved.dram_write / 1e6:.1f} MB"
        f"  (bank use mean {statistics.mean(banks):.2f}  max {max(banks):.2f})"
    )
    gbps = arch.gbps(moved.dram_read + moved.dram_write, sim.cycles)
    top = max((u.utilization for u in sim.link_utilization), default=0.0)
    lines.append(
        f"  DRAM {gbps:,.1f} GB/s = {100 * gbps / arch.dram_peak_gbps:.0f}% of the"
        f" {arch.dram_peak_gbps:,.1f} GB/s peak (launch included); busiest link {top:.2f}"
    )
    lines.append(
        f"  NoC unicast {moved.noc_unicast / 1e6:.1f} MB"
        f"  multicast {moved.noc_multicast / 1e6:.1f} MB"
    )
    lines.append(
        f"  binds: {binding_engine(sim)}  (utilization {sim.utilization:.2f} of matmul peak)"
    )
    return lines


def breakdown(
    kernel: str, arch_name: str, shape_text: str, baseline: str | None, accumulate: str = "strict"
) -> list[str]:
    """Loom's pick (its accumulators placed under `accumulate`) and `baseline` on one
    case, simulated, as printable lines."""
    source = kernel_source(kernel) if kernel in TUNED else str(FAMILIES_DIR / f"{kernel}.py")
    spec, arch = resolve_kernel(source), load_arch(arch_name)
    shape = parse_shape(shape_text, spec)
    result = compile_kernel(
        spec, CompileOptions(arch=arch, shape=shape, jobs=1, top_k=1, accumulate=accumulate)
    )
    own = result.lowered.lowered
    loom = simulate(own, arch)
    lines = describe(f"loom {result.schedule.candidate}", loom, own, arch)
    modeled = result.schedule.modeled_cycles
    lines.append(f"  modeled {modeled:,} (sim / model {loom.cycles / modeled:.3f})")
    if baseline is None:  # a family with no TTNN op of its own (RMSNorm + residual)
        return lines
    try:
        program = baseline_program(case(kernel, arch_name, shape), baseline)
    except ScheduleError as refusal:  # TTNN's own factory cannot run this shape
        return [*lines, f"{baseline}: none ({refusal})"]
    base = simulate(program, arch)
    lines += describe(baseline, base, program, arch)
    lines.append(f"loom / {baseline}: {base.cycles / loom.cycles:.3f}x")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    families = {path.stem for path in FAMILIES_DIR.glob("*.py")}
    ap.add_argument(
        "--kernel", default="flash_attention_causal", choices=sorted(set(TUNED) | families)
    )
    ap.add_argument("--arch", default="wormhole_n150")
    ap.add_argument("--shape", default="B=1,H=8,S=2048,D=64")
    ap.add_argument("--baseline", help="default: the kernel's tuned TTNN")
    ap.add_argument(
        "--accumulate",
        choices=ACCUMULATE_POLICIES,
        default="strict",
        help="Loom's accumulators (as `loom compile --accumulate`; `loom eval` uses strict)",
    )
    args = ap.parse_args()
    baseline = args.baseline or TUNED.get(args.kernel)
    print("\n".join(breakdown(args.kernel, args.arch, args.shape, baseline, args.accumulate)))


if __name__ == "__main__":
    main()
