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

`--table` prints one markdown row per case instead, kernels x archs x shapes (default: the
memory-bound row ops at the LLM shapes of `selection_families.LLM_SHAPES` on both
architectures, docs/evaluation.md's DRAM-share table): the pick, its cycles, its DRAM
rate as a share of the peak, the banks, links and engines behind it, and the ratio to
the layer op's TTNN op (`-`: none exists; `none`: TTNN's factory refuses the shape):

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/core_breakdown.py --table \\
        [--kernels rms_norm,softmax] [--archs wormhole_n150] [--shapes M=1024,N=2048 ...] \\
        [--jobs 2]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, replace

from bench_util import forked_imap, shape_text
from loom.arch import Arch, load_arch
from loom.baselines.ttnn_layer import LAYER_BASELINES
from loom.errors import ScheduleError
from loom.eval.cases import FAMILIES_DIR, case, kernel_source
from loom.eval.run import baseline_program
from loom.flows.helion import CompileOptions, compile_kernel
from loom.ir.buffers import ACCUMULATE_POLICIES
from loom.ir.program import Program
from loom.ir.schedule import Schedule
from loom.kernels.registry import parse_shape, resolve_kernel
from loom.mapping.engines import READER_ONLY
from loom.sim import SimResult, simulate
from selection_families import LLM_SHAPES

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


def dram_share(sim: SimResult, arch: Arch) -> tuple[float, float]:
    """The DRAM bytes read and written over the simulated time (launch included): GB/s
    and the percentage of the nominal peak."""
    moved = sim.bytes_moved
    gbps = arch.gbps(moved.dram_read + moved.dram_write, sim.cycles)
    return gbps, 100 * gbps / arch.dram_peak_gbps


def busiest_link(sim: SimResult) -> float:
    return max((u.utilization for u in sim.link_utilization), default=0.0)


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
    gbps, share = dram_share(sim, arch)
    lines.append(
        f"  DRAM {gbps:,.1f} GB/s = {share:.0f}% of the"
        f" {arch.dram_peak_gbps:,.1f} GB/s peak (launch included);"
        f" busiest link {busiest_link(sim):.2f}"
    )
    lines.append(
        f"  NoC unicast {moved.noc_unicast / 1e6:.1f} MB"
        f"  multicast {moved.noc_multicast / 1e6:.1f} MB"
    )
    lines.append(
        f"  binds: {binding_engine(sim)}  (utilization {sim.utilization:.2f} of matmul peak)"
    )
    return lines


@dataclass(frozen=True)
class CaseRuns:
    """One case simulated: Loom's pick and, where the case has one, the baseline's."""

    arch: Arch
    schedule: Schedule
    program: Program
    sim: SimResult
    baseline: str | None = None
    """None: no baseline asked for (a family with no TTNN op: RMSNorm + residual)."""
    base: tuple[Program, SimResult] | None = None
    """None with a `baseline`: TTNN's own factory refuses the shape (`refusal` says why)."""
    refusal: str = ""


def simulate_case(
    kernel: str, arch_name: str, shape_text: str, baseline: str | None, accumulate: str = "strict"
) -> CaseRuns:
    """Loom's pick (rank 1, as `loom eval` takes it; its accumulators placed under
    `accumulate`) and `baseline` on one case, simulated."""
    source = kernel_source(kernel) if kernel in TUNED else str(FAMILIES_DIR / f"{kernel}.py")
    spec, arch = resolve_kernel(source), load_arch(arch_name)
    shape = parse_shape(shape_text, spec)
    result = compile_kernel(
        spec, CompileOptions(arch=arch, shape=shape, jobs=1, top_k=1, accumulate=accumulate)
    )
    own = result.lowered.lowered
    runs = CaseRuns(arch, result.schedule, own, simulate(own, arch), baseline)
    if baseline is None:
        return runs
    try:
        program = baseline_program(case(kernel, arch_name, shape), baseline)
    except ScheduleError as refusal:  # TTNN's own factory cannot run this shape
        return replace(runs, refusal=str(refusal))
    return replace(runs, base=(program, simulate(program, arch)))


def breakdown(
    kernel: str, arch_name: str, shape_text: str, baseline: str | None, accumulate: str = "strict"
) -> list[str]:
    """Loom's pick and `baseline` on one case, simulated, as printable lines."""
    runs = simulate_case(kernel, arch_name, shape_text, baseline, accumulate)
    loom = runs.sim
    lines = describe(f"loom {runs.schedule.candidate}", loom, runs.program, runs.arch)
    modeled = runs.schedule.modeled_cycles
    lines.append(f"  modeled {modeled:,} (sim / model {loom.cycles / modeled:.3f})")
    if baseline is None:
        return lines
    if runs.base is None:
        return [*lines, f"{baseline}: none ({runs.refusal})"]
    program, base = runs.base
    lines += describe(baseline, base, program, runs.arch)
    lines.append(f"loom / {baseline}: {base.cycles / loom.cycles:.3f}x")
    return lines


ROW_OPS = {
    "rms_norm": "RMSNorm",
    "rms_norm_residual": "RMSNorm + residual",
    "layer_norm": "LayerNorm",
    "softmax": "softmax",
}
"""The memory-bound row ops of the DRAM-share table, as its rows name them."""
ARCH_LABELS = {"wormhole_n150": "WH", "blackhole_p150_13x10": "BH"}
TABLE_HEADER = (
    "| case | pick (realization, [tile_m, chunk]) | simulated cycles | DRAM GB/s (% of peak)"
    " | cores, banks, busiest link, engines busy, sim/model | vs TTNN |",
    "| --- | --- | --- | --- | --- | --- |",
)
_ENGINES = (("reader", "rd"), ("compute", "c"), ("writer", "wr"))


def pick_label(schedule: Schedule) -> str:
    """A pick in short: its view (`__rd`: the reader-only engine variant), realization
    (where the kernel has two) and block sizes, e.g. `x8_y4 looped [32,1024]`."""
    view = f"x{schedule.mapping.cores_x}_y{schedule.mapping.cores_y}"
    variant = f" `{READER_ONLY}`" if READER_ONLY in schedule.candidate else ""
    realization = schedule.realization or ("persistent" if schedule.realization_note else "")
    sizes = ",".join(str(size) for size in schedule.block_sizes.values())
    return " ".join(part for part in (view + variant, realization, f"[{sizes}]") if part)


def table_row(kernel: str, arch_name: str, shape_text: str) -> str:
    """One case as a markdown row of the DRAM-share table (its TTNN op the baseline).
    Banks: the mean bank use (served over achievable); engines: mean busy fractions."""
    runs = simulate_case(kernel, arch_name, shape_text, TUNED.get(kernel))
    sim = runs.sim
    gbps, share = dram_share(sim, runs.arch)
    banks = statistics.mean(sim.dram_bank_utilization or (0.0,))
    busy = {e.engine: e.mean for e in sim.engine_busy}
    engines = " ".join(f"{short} {busy[e]:.2f}" for e, short in _ENGINES if e in busy)
    cores = len({c.core for c in sim.core_busy})
    ratio = sim.cycles / runs.schedule.modeled_cycles
    vs = "-" if runs.baseline is None else "none"
    if runs.base is not None:
        vs = f"{runs.base[1].cycles / sim.cycles:.3f}"
    dims = "×".join(part.split("=")[1] for part in shape_text.split(","))
    label = f"{ROW_OPS.get(kernel, kernel)}, {ARCH_LABELS.get(arch_name, arch_name)}, {dims}"
    return (
        f"| {label} | {pick_label(runs.schedule)} | {sim.cycles:,.0f} | {gbps:.1f} ({share:.0f}%)"
        f" | cores {cores}, banks {banks:.2f}, link {busiest_link(sim):.2f}, {engines},"
        f" sim/model {ratio:.2f} | {vs} |"
    )


def table(kernels: list[str], archs: list[str], shapes: list[str], jobs: int = 1) -> Iterator[str]:
    """The header and one row per case (kernel, then arch, then shape), in that order
    whatever order `jobs` forked workers finish them in."""
    cases = [(k, a, s) for k in kernels for a in archs for s in shapes]
    yield from TABLE_HEADER
    done: dict[int, str] = {}
    ready = 0
    for i, row in forked_imap(lambda i: table_row(*cases[i]), range(len(cases)), jobs, True):
        done[i] = row
        while ready in done:  # print each row as soon as those before it are done
            yield done.pop(ready)
            ready += 1


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
    ap.add_argument("--table", action="store_true", help="markdown rows, one per case")
    ap.add_argument("--kernels", default=",".join(ROW_OPS), help="--table: comma-separated")
    ap.add_argument("--archs", default=",".join(ARCH_LABELS), help="--table: comma-separated")
    ap.add_argument(
        "--shapes",
        nargs="+",
        default=[shape_text(shape) for shape in LLM_SHAPES],
        help="--table: e.g. M=1024,N=2048 M=8192,N=4096",
    )
    ap.add_argument("--jobs", type=int, default=1, help="--table: cases at once (forked)")
    args = ap.parse_args()
    if args.table:
        kernels, archs = args.kernels.split(","), args.archs.split(",")
        for line in table(kernels, archs, args.shapes, args.jobs):
            print(line, flush=True)
        return
    baseline = args.baseline or TUNED.get(args.kernel)
    print("\n".join(breakdown(args.kernel, args.arch, args.shape, baseline, args.accumulate)))


if __name__ == "__main__":
    main()
