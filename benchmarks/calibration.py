"""Calibrate loom.sim against Tenstorrent's published measurements (../shared/calibration/).

Part (a) (`calibration_noc.py`) replays the data-movement microbenchmarks on the
simulator's transaction-level primitives (the same legs, links, banks and latencies that
`simulate` uses): the 13 per-transfer-size tables of noc_ideal_throughput.csv (unicast
write and read, unlinked and linked multicast, DRAM read and write, gather), the "ideal
primitive" throughputs, the multi-reader DRAM bandwidth measurements of
dram_bandwidth.csv, and two groups of noc_latencies.yaml entries (one core on one DRAM
bank; every core on interleaved DRAM). Their pooled median |error| is printed over all
rows and over two fixed halves (within each table the 1st, 3rd, 5th... counted row is the
fit half, the rest held out); `--fit-noc FIELD=v1,v2,...` grid-fits one NoC/DRAM number
(`ARCH:FIELD` for one architecture) on the fit half and prints the held-out half beside it.

Part (b) expresses TTNN's program configuration of every matmul row as a Schedule (grid,
per-core blocks, in0 block width, 2-D multicast of A and B, double buffering), turns it
into a Program, simulates it and compares the kernel time with the device-profiler time
derived from the published device utilization, and TFLOPS with the published
(host-measured) figures: with a trace, the op takes the kernel plus `fixed.program_launch_us`;
without, also `fixed.host_dispatch_us`. Tables (`--tables`): N150_MANUAL, N150_OOB,
P150_MANUAL_13x10, P150_OOB_13x10; manual rows use the reconstructed config of the row,
out-of-box rows the config TTNN picks automatically (loom.baselines.ttnn_matmul_oob).
Each table reports median and mean |% error| of trace TFLOPS, no-trace TFLOPS and device
kernel time per dtype x fidelity group, over all rows, and over the two halves of a fixed
split (`fit_half`: within each dtype x fidelity group, the 1st, 3rd, 5th... distinct shape
in table order is fitted on, the others are held out); the per-op launch and dispatch
times that best fit the fit half are printed next to the architecture's values.

Two ways to get the Program (`--lowering`): `fixture` (default) builds it with
tests/sim/sim_programs.py to mirror TTNN's own kernels (which NoC each operand uses,
L1-sharded operands, bf16 packer-accumulated partials), so that the comparison measures the
simulator; `loom` runs loom.lower.lower on the shipped Helion GEMM, so that it measures
Loom's lowering of TTNN's schedule plus the simulator. `program_for` is where they split.

Part (c) (`calibration_attention.py`, `--parts attention`, not in the default parts: it
simulates attention at 4096-8192 tokens) replays TTNN's SDPA prefill measurements on
Blackhole p100a as TTNN's configuration of Loom's attention kernels.

Every row prints measured, simulated and % error; each table ends with the median absolute
% error. Rows whose measured value *is* an architecture input (so agreement is circular)
are marked `input` and left out of the medians. The values this calibration fitted
live in the architecture files, marked FITTED in their source notes;
`--fit-matmul-overhead` and `--fit-unpack` redo the fits of `matmul.tile_overhead_cycles`
and `compute.unpack_bytes_per_cycle` (N150: on the bf16 HiFi4 device times only; other
tables: on the fit half), so that the other rows check them.

    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py [--brief] [--lowering loom]
    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py --parts matmul --tables T1,T2
    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py --parts attention [--jobs N]
    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py --fit-matmul-overhead [2,3,4]
    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py --tables T --fit-unpack 80,128
    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py --fit-noc dram.read_request_cycles=6,9
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sim"))  # the fixture builder, see above

# Internals, not the public API: this script simulates hand-built Programs (TTNN's own
# kernels) and single NoC/DRAM transactions, which no compiled kernel exposes.
from sim_programs import GemmConfig, gemm_program  # noqa: E402

from bench_util import CALIBRATION, forked_map  # noqa: E402
from calibration_attention import attention_table  # noqa: E402
from calibration_noc import (  # noqa: E402
    ARCHS,
    POOLED,
    POOLED_FIT,
    POOLED_HELD_OUT,
    Row,
    all_cores_dram_table,
    dram_aggregate_table,
    ideal_table,
    one_bank_table,
    per_size_tables,
)
from loom.arch import Arch, load_arch  # noqa: E402
from loom.ir.program import Program  # noqa: E402
from loom.ir.schedule import Copy as CopySpec  # noqa: E402
from loom.ir.schedule import Mapping, MeshLevel, Schedule  # noqa: E402
from loom.sim import SimParams, from_arch, simulate  # noqa: E402

# ----- (b) TTNN matmul rows -----------------------------------------------------------------

DTYPES = {"BFLOAT16": "bf16", "BFLOAT8_B": "bfp8", "BFLOAT4_B": "bfp4"}


def mcast_2d_mapping(gx: int, gy: int) -> Mapping:
    """TTNN's 2-D multicast grid: N over the columns, M over the rows."""
    return Mapping((MeshLevel("x", 0, gx, "tile_n"), MeshLevel("y", 0, gy, "tile_m")))


def mcast_2d_copies(gx: int, gy: int) -> tuple[CopySpec, ...]:
    """A multicast along the core's row, B down its column, C stored by each core."""
    return (
        CopySpec(0, "a", "load", "multicast", (1, gx), "row of the core", ("x",)),
        CopySpec(1, "b", "load", "multicast", (gy, 1), "column of the core", ("y",)),
        CopySpec(2, "out", "store", "unicast"),
    )


def ttnn_schedule(rec: dict[str, str], arch: str) -> Schedule:
    """TTNN's MatmulMultiCoreReuseMultiCastProgramConfig for one row, as a Schedule."""
    gx, gy = int(rec["grid_x"]), int(rec["grid_y"])
    bm, bn = int(rec["out_block_h"]), int(rec["out_block_w"])
    return Schedule(
        kernel="gemm",
        arch=arch,
        shape={"M": int(rec["M"]), "N": int(rec["N"]), "K": int(rec["K"])},
        dtype=DTYPES[rec["dtype_in0"]],
        math_fidelity=rec["math_fidelity"],
        candidate="ttnn_reuse_mcast_2d",
        mapping=mcast_2d_mapping(gx, gy),
        copies=mcast_2d_copies(gx, gy),
        block_sizes={"tile_m": 32 * bm, "tile_n": 32 * bn, "tile_k": 32 * int(rec["in0_block_w"])},
        pipeline={"loop:tile_k": {"b_load": 1, "b_store": 0}},
        waves={"tile_m": int(rec["num_out_blocks_h"]), "tile_n": int(rec["num_out_blocks_w"])},
        notes=(
            f"in0 {'L1 block-sharded' if rec['in0_sharded'] == 'True' else 'DRAM interleaved'}",
            f"out {'L1 block-sharded' if rec['out_sharded'] == 'True' else 'DRAM interleaved'}",
            f"out_subblock {rec['out_subblock_h']}x{rec['out_subblock_w']}",
            "packer_l1_acc, fp32_dest_acc_en=False",
        ),
    )


def oob_schedule(rec: dict[str, str], arch: Arch) -> Schedule | None:
    """An out-of-box row (no program config given) as the Schedule of the config TTNN picks
    automatically: `loom.baselines.ttnn_matmul_oob.oob_matmul_config` (the rule of tt-metal's
    matmul_program_config.cpp, kept where the baselines use it too). The per-core block is
    split into output blocks that fit L1 by the module's `out_block` when it has one (whole
    per-core blocks otherwise). Only 2-D multicast configs whose per-core blocks tile M and
    N exactly are expressed (None otherwise)."""
    try:
        from loom.baselines import ttnn_matmul_oob as oob
    except ImportError:
        return None
    m, k, n = int(rec["M"]), int(rec["K"]), int(rec["N"])
    dtype = DTYPES[rec["dtype_in0"]]
    cfg = oob.oob_matmul_config(m, k, n, arch.grid_x, arch.grid_y, dtype, arch.name)
    gx, gy = cfg.grid_x, cfg.grid_y
    if cfg.kind != "mcast_2d" or m // 32 != gy * cfg.per_core_m or n // 32 != gx * cfg.per_core_n:
        return None
    split = getattr(oob, "out_block", None)
    bm, bn = cfg.per_core_m, cfg.per_core_n
    if split is not None:
        bm, bn, _ = split(cfg.per_core_m, cfg.per_core_n, cfg.in0_block_w, dtype, arch.name)
    return Schedule(
        kernel="gemm",
        arch=arch.name,
        shape={"M": m, "N": n, "K": k},
        dtype=dtype,
        math_fidelity=cfg.math_fidelity,
        candidate="ttnn_oob_mcast_2d",
        mapping=mcast_2d_mapping(gx, gy),
        copies=mcast_2d_copies(gx, gy),
        block_sizes={"tile_m": 32 * bm, "tile_n": 32 * bn, "tile_k": 32 * cfg.in0_block_w},
        pipeline={"loop:tile_k": {"b_load": 1, "b_store": 0}},
        waves={"tile_m": cfg.per_core_m // bm, "tile_n": cfg.per_core_n // bn},
        notes=(
            "in0 DRAM interleaved",
            "out DRAM interleaved",
            f"out_subblock {cfg.out_subblock_h}x{cfg.out_subblock_w}",
            f"fp32_dest_acc_en={cfg.fp32_dest_acc}",
        ),
    )


def row_schedule(rec: dict[str, str], table: str, arch: Arch) -> Schedule | None:
    if "OOB" in table:
        return oob_schedule(rec, arch)
    return ttnn_schedule(rec, arch.name)


def program_for(schedule: Schedule, arch: Arch, lowering: str) -> Program:
    """The Program of one TTNN row: `fixture` mirrors TTNN's kernels, `loom` is Loom's own
    lowering of the same Schedule."""
    if lowering == "loom":
        return loom_program(schedule, arch)
    return fixture_program(schedule)


def fixture_program(schedule: Schedule) -> Program:
    """The fixture builder (tests/sim/sim_programs.py) written to mirror TTNN's kernels.

    Column 0 reads A and multicasts it along its row (in0 on Wormhole's DRAM-write NoC,
    NoC1 = writer stream), row 0 reads B and multicasts it down its column and writes C
    (in1 on the DRAM-read NoC, NoC0 = reader stream), right-half cores write C on the
    other NoC (TTNN's split_half, interleaved in0 only), A and B are double-buffered, the
    accumulator goes through packer L1 accumulation. A block-sharded A is approximated by
    a fixed sender per row that multicasts without reading DRAM (TTNN rotates the sender
    along the row); a block-sharded C is not written back."""
    s = schedule
    a_l1 = "in0 L1 block-sharded" in s.notes
    return gemm_program(
        GemmConfig(
            m=s.shape["M"],
            n=s.shape["N"],
            k=s.shape["K"],
            grid=(s.mapping.cores_y, s.mapping.cores_x),
            bm=s.block_sizes["tile_m"] // 32,
            bn=s.block_sizes["tile_n"] // 32,
            bk=s.block_sizes["tile_k"] // 32,
            waves_m=s.waves["tile_m"],
            waves_n=s.waves["tile_n"],
            a_in_l1=a_l1,
            out_in_l1="out L1 block-sharded" in s.notes,
            dtype=s.dtype,
            acc_dtype="fp32" if "fp32_dest_acc_en=True" in s.notes else "bf16",
            out_dtype=s.dtype,
            fidelity=s.math_fidelity,
            a_on_writer=True,
            split_store=not a_l1,
        )
    )


_TILE_PROGRAMS: dict[tuple[int, int, int], object] = {}


def loom_program(schedule: Schedule, arch: Arch) -> Program:
    """loom.lower.lower on the shipped Helion GEMM (bf16 in/out, fp32 accumulator), with
    the inputs' and output's dtype then set to the row's (the kernel is bf16-only). L1
    sharding is not expressible in a Schedule: A is read from and C written to DRAM."""
    from loom.dataflow import build_buffers
    from loom.frontend import import_kernel
    from loom.kernels.registry import resolve_kernel
    from loom.lower import lower

    shape = schedule.shape
    key = (shape["M"], shape["N"], shape["K"])
    if key not in _TILE_PROGRAMS:
        spec = resolve_kernel("gemm")
        _TILE_PROGRAMS[key] = import_kernel(spec.kernel, spec.example_inputs(dict(shape)))
    tile = _TILE_PROGRAMS[key]
    program = lower(tile, build_buffers(tile), schedule, arch)  # type: ignore[arg-type]
    dt = schedule.dtype
    return dataclasses.replace(
        program,
        tensors=tuple(dataclasses.replace(t, dtype=dt) for t in program.tensors),
        buffers=tuple(
            b if b.role == "state" else dataclasses.replace(b, dtype=dt) for b in program.buffers
        ),
    )


TABLES: dict[str, tuple[str, str]] = {
    "N150_MANUAL": ("ttnn_matmul.csv", "wormhole_n150"),
    "N150_OOB": ("ttnn_matmul.csv", "wormhole_n150"),
    "P150_MANUAL_13x10": ("ttnn_matmul_p150_13x10.csv", "blackhole_p150_13x10"),
    "P150_OOB_13x10": ("ttnn_matmul_p150_13x10.csv", "blackhole_p150_13x10"),
}
"""Published TTNN matmul table -> (calibration file, architecture it ran on)."""


def matmul_records(table: str = "N150_MANUAL") -> list[dict[str, str]]:
    path, _ = TABLES[table]
    with open(CALIBRATION / path) as f:
        return [r for r in csv.DictReader(f) if r["table"] == table]


def shape_key(rec: dict[str, str]) -> tuple[str, ...]:
    return (rec["M"], rec["K"], rec["N"], rec["dtype_in0"], rec["math_fidelity"])


def fit_half(recs: list[dict[str, str]]) -> set[tuple[str, ...]]:
    """The fixed fit/held-out split: within each dtype x fidelity group, the distinct shapes
    in table order alternate fit, held out, fit, ... (the 1st, 3rd, 5th shape are fitted
    on). The trace and no-trace rows of one shape fall in the same half, so a held-out
    row's shape was never seen by a fit."""
    order: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for rec in recs:
        keys = order.setdefault((rec["dtype_in0"], rec["math_fidelity"]), [])
        if shape_key(rec) not in keys:
            keys.append(shape_key(rec))
    return {k for keys in order.values() for k in keys[0::2]}


def row_label(rec: dict[str, str]) -> str:
    return (
        f"{rec['M']}x{rec['K']}x{rec['N']} {DTYPES[rec['dtype_in0']]:4s} "
        f"{rec['math_fidelity']:5s} {'L1' if rec['in0_sharded'] == 'True' else 'DRAM'}"
    )


@dataclass(frozen=True)
class MatmulRow:
    """One published row next to its simulation: the kernel time, and the host-visible op
    time with (trace) the program launch, or (no trace) also the host dispatch added."""

    rec: dict[str, str]
    kernel_us: float
    fit: bool

    @property
    def trace(self) -> bool:
        return self.rec["trace"] == "True"

    @property
    def flops(self) -> float:
        return 2.0 * int(self.rec["M"]) * int(self.rec["K"]) * int(self.rec["N"])

    @property
    def group(self) -> str:
        return f"{DTYPES[self.rec['dtype_in0']]} {self.rec['math_fidelity']}"

    def tflops(self, launch_us: float, dispatch_us: float) -> float:
        op_us = self.kernel_us + launch_us + (0.0 if self.trace else dispatch_us)
        return self.flops / (op_us * 1e6)


JOBS = 1
"""Worker processes simulating distinct programs at once (`--jobs`); results do not
depend on it."""


def _kernel_us(job: tuple[Schedule, Arch, str]) -> float:
    sched, arch, lowering = job
    r = simulate(program_for(sched, arch, lowering), arch, params=from_arch(arch))
    return arch.cycles_to_us(r.kernel_cycles)


def kernel_times(schedules: list[Schedule], arch: Arch, lowering: str) -> dict[str, float]:
    """Simulated kernel time (us) of each distinct schedule, keyed by its JSON."""
    distinct = {s.to_json(): s for s in schedules}
    jobs = [(s, arch, lowering) for s in distinct.values()]
    times = forked_map(lambda i: _kernel_us(jobs[i]), len(jobs), JOBS)
    return dict(zip(distinct, times, strict=True))


def simulate_table(
    table: str, params: dict[str, SimParams], archs: dict[str, Arch], lowering: str
) -> list[MatmulRow]:
    recs = matmul_records(table)
    fit = fit_half(recs)
    out = []
    t0 = time.perf_counter()
    arch = archs[TABLES[table][1]]
    scheds = [(rec, row_schedule(rec, table, arch)) for rec in recs]
    skipped = sum(s is None for _, s in scheds)
    cache = kernel_times([s for _, s in scheds if s is not None], arch, lowering)
    for rec, sched in scheds:
        if sched is not None:
            out.append(MatmulRow(rec, cache[sched.to_json()], shape_key(rec) in fit))
    print(
        f"\n({table}, {lowering} lowering: {len(cache)} distinct programs simulated in "
        f"{time.perf_counter() - t0:.1f} s; {skipped} rows not expressed"
        + (
            ": TTNN's automatic config is not a whole-grid 2-D multicast, or the rule is missing"
            if skipped and "OOB" in table
            else ""
        )
        + ")"
    )
    return out


@dataclass(frozen=True)
class Errors:
    """Median and mean |% error| of the three published quantities over some rows."""

    n: int
    trace: tuple[float, float]
    no_trace: tuple[float, float]
    device: tuple[float, float]


def _stats(errs: list[float]) -> tuple[float, float]:
    if not errs:
        return (float("nan"), float("nan"))
    return (statistics.median(errs), statistics.fmean(errs))


def errors(rows: list[MatmulRow], launch_us: float, dispatch_us: float) -> Errors:
    def err(sim: float, meas: float) -> float:
        return abs(100.0 * (sim - meas) / meas)

    trace = [err(r.tflops(launch_us, dispatch_us), float(r.rec["tflops"])) for r in rows if r.trace]
    no = [
        err(r.tflops(launch_us, dispatch_us), float(r.rec["tflops"])) for r in rows if not r.trace
    ]
    dev = [err(r.kernel_us, float(r.rec["device_kernel_time_us_derived"])) for r in rows if r.trace]
    return Errors(len(trace), _stats(trace), _stats(no), _stats(dev))


def fit_offset(rows: list[MatmulRow], trace: bool, other_us: float) -> float:
    """The per-op time (us, 0.05 steps) added to the simulated kernel that minimises the
    median |TFLOPS error| of the fit-half rows with this `trace` flag; `other_us` is the
    fixed part (the launch when fitting the host dispatch)."""
    chosen = [r for r in rows if r.fit and r.trace == trace]

    def med(x: float) -> float:
        e = errors(chosen, x, 0.0) if trace else errors(chosen, other_us, x)
        return e.trace[0] if trace else e.no_trace[0]

    grid = [i * 0.05 for i in range(0, 2001)]
    return min(grid, key=lambda x: (round(med(x), 6), x))


def print_errors(title: str, e: Errors) -> None:
    print(
        f"  {title:22s} {e.n:4d}  {e.trace[0]:6.1f} {e.trace[1]:6.1f}   "
        f"{e.no_trace[0]:6.1f} {e.no_trace[1]:6.1f}   {e.device[0]:6.1f} {e.device[1]:6.1f}"
    )


def matmul_table_report(
    table: str, rows: list[MatmulRow], arch: Arch, brief: bool
) -> dict[str, Errors]:
    """Per-row comparison (unless brief), then median / mean |% error| per dtype x
    fidelity group, over all rows, the fit half and the held-out half."""
    launch, dispatch = arch.fixed.program_launch_us, arch.fixed.host_dispatch_us
    print(f"\n=== TTNN {table} matmul on {arch.name} ({len(rows)} rows) ===")
    if not brief:
        print(
            f"{'row':34s} {'trace':>5s} {'half':>4s} {'TFLOPS':>8s} {'sim':>8s} {'err %':>7s} "
            f"{'dev us':>9s} {'sim us':>9s} {'err %':>7s}"
        )
        for r in rows:
            meas, sim = float(r.rec["tflops"]), r.tflops(launch, dispatch)
            dev = float(r.rec["device_kernel_time_us_derived"])
            print(
                f"{row_label(r.rec):34s} {'yes' if r.trace else 'no':>5s} "
                f"{'fit' if r.fit else 'held':>4s} {meas:8.2f} {sim:8.2f} "
                f"{100 * (sim - meas) / meas:7.1f} {dev:9.2f} {r.kernel_us:9.2f} "
                f"{100 * (r.kernel_us - dev) / dev:7.1f}"
            )
    print(
        f"  {'median / mean |err %|':22s} {'rows':>4s}  {'trace TFLOPS':>13s}   "
        f"{'no-trace TFLOPS':>13s}   {'device kernel time':>13s}"
    )
    out: dict[str, Errors] = {}
    groups = sorted({r.group for r in rows})
    for g in groups:
        out[g] = errors([r for r in rows if r.group == g], launch, dispatch)
        print_errors(g, out[g])
    out["all"] = errors(rows, launch, dispatch)
    out["fit half"] = errors([r for r in rows if r.fit], launch, dispatch)
    out["held-out half"] = errors([r for r in rows if not r.fit], launch, dispatch)
    for name in ("all", "fit half", "held-out half"):
        print_errors(name, out[name])
    fl = fit_offset(rows, True, 0.0)
    fd = fit_offset(rows, False, launch)
    print(
        f"  fits on the fit half: program launch (trace) {fl:.2f} us "
        f"(arch: {launch}); host dispatch (no trace) {fd:.2f} us (arch: {dispatch})"
    )
    return out


def matmul_tables(
    params: dict[str, SimParams],
    archs: dict[str, Arch],
    brief: bool,
    lowering: str = "fixture",
    tables: Iterable[str] = tuple(TABLES),
) -> dict[str, dict[str, Errors]]:
    out = {}
    for table in tables:
        rows = simulate_table(table, params, archs, lowering)
        if rows:
            out[table] = matmul_table_report(table, rows, archs[TABLES[table][1]], brief)
    return out


FIT_OVERHEADS = range(0, 9)


def in_fit_set(rec: dict[str, str]) -> bool:
    """The N150 tile-overhead fit set: the bf16 HiFi4 rows (kept from the first fit)."""
    return rec["dtype_in0"] == "BFLOAT16" and rec["math_fidelity"] == "HiFi4"


def fit_rows(table: str) -> list[dict[str, str]]:
    """The trace rows a per-table fit uses: N150, the bf16 HiFi4 rows (the first fit's
    set, kept); other tables, the fit half."""
    recs = [r for r in matmul_records(table) if r["trace"] == "True"]
    if table == "N150_MANUAL":
        return [r for r in recs if in_fit_set(r)]
    fit = fit_half(recs)
    return [r for r in recs if shape_key(r) in fit]


def fit_arch_field(
    archs: dict[str, Arch],
    lowering: str,
    table: str,
    field: str,
    candidates: Iterable[float],
) -> None:
    """Grid-fit one architecture number (`matmul.tile_overhead_cycles` or
    `compute.unpack_bytes_per_cycle`) of the table's architecture: simulate the fit rows
    with each candidate and keep the one whose kernel time is nearest the device-profiler
    time (median |error|; ties to the smaller value). Held-out rows stay out."""
    recs = fit_rows(table)
    base = archs[TABLES[table][1]]
    group, name = field.split(".")
    medians: dict[float, float] = {}
    for value in candidates:
        value = int(value) if name.endswith("_cycles") else float(value)
        part = dataclasses.replace(getattr(base, group), **{name: value})
        arch = dataclasses.replace(base, **{group: part})
        scheds = [ttnn_schedule(rec, base.name) for rec in recs]
        times = kernel_times(scheds, arch, lowering)
        rows = []
        for rec, sched in zip(recs, scheds, strict=True):
            measured = float(rec["device_kernel_time_us_derived"])
            rows.append(Row(row_label(rec), measured, times[sched.to_json()], "us"))
        medians[value] = statistics.median(abs(r.error) for r in rows)
        print(
            f"{field} {value}: median |error| {medians[value]:5.1f}% over {len(rows)} "
            f"{table} fit rows (kernel vs device-profiler time)",
            flush=True,
        )
    best = min(medians, key=lambda v: (medians[v], v))
    current = getattr(getattr(base, group), name)
    print(f"\n>>> best {field} = {best}; {base.name} has {current}")


# ----- driver -------------------------------------------------------------------------------


def noc_tables(params: dict[str, SimParams], archs: dict[str, Arch], brief: bool) -> list[float]:
    """Every NoC/DRAM table (filling POOLED and its halves); their medians."""
    for pool in (POOLED, POOLED_FIT, POOLED_HELD_OUT):
        pool.clear()
    noc = per_size_tables(params, archs, brief)
    noc.append(ideal_table(params, archs, brief))
    noc.append(dram_aggregate_table(params, archs, brief))
    noc.append(one_bank_table(params, brief))
    noc.append(all_cores_dram_table(params, archs, brief))
    return noc


def fit_noc_field(field: str, candidates: Iterable[float]) -> None:
    """Grid-fit one NoC/DRAM number (`dram.request_cycles`, or `ARCH:dram.request_cycles`
    for one architecture) of the microbenchmark architectures on the fit half of the
    NoC/DRAM rows (pooled median |error|); the held-out half is printed beside it, never
    used to choose."""
    only, _, field = field.rpartition(":")
    group, name = field.split(".")
    for value in candidates:
        archs = {}
        for n in sorted(set(ARCHS.values())):
            base = load_arch(n)
            if only and n != only:
                archs[n] = base
                continue
            archs[n] = dataclasses.replace(
                base, **{group: dataclasses.replace(getattr(base, group), **{name: value})}
            )
        noc_tables({n: from_arch(a) for n, a in archs.items()}, archs, brief=True)
        print(
            f">>> {field} {value}: fit half {statistics.median(POOLED_FIT):.2f}%, held-out "
            f"half {statistics.median(POOLED_HELD_OUT):.2f}%, all {statistics.median(POOLED):.2f}%",
            flush=True,
        )


def run(brief: bool, parts: Iterable[str], lowering: str, tables: list[str]) -> None:
    names = sorted(set(ARCHS.values()) | {arch for _, arch in TABLES.values()})
    archs = {n: load_arch(n) for n in names}
    params = {name: from_arch(arch) for name, arch in archs.items()}
    if "noc" in parts:
        noc = noc_tables(params, archs, brief)
        print(
            f"\n>>> NoC/DRAM microbenchmarks (target <= 6%): median |error| over all "
            f"{len(POOLED)} counted rows {statistics.median(POOLED):.1f}% (fit half "
            f"{statistics.median(POOLED_FIT):.1f}% over {len(POOLED_FIT)}, held-out half "
            f"{statistics.median(POOLED_HELD_OUT):.1f}% over {len(POOLED_HELD_OUT)}); median "
            f"of the {len(noc)} per-table medians {statistics.median(noc):.1f}%; "
            f"{sum(m > 10 for m in noc)} tables above 10%"
        )
    if "matmul" in parts:
        mm = matmul_tables(params, archs, brief, lowering, tables)
        print(
            "\n>>> TTNN matmul rows, median |error| % (trace TFLOPS / no-trace TFLOPS / "
            "device kernel time):"
        )
        for table, errs in mm.items():
            for half in ("all", "held-out half"):
                e = errs[half]
                print(
                    f"    {table:18s} {half:13s} {e.trace[0]:5.1f} / {e.no_trace[0]:5.1f} / "
                    f"{e.device[0]:5.1f}"
                )
    if "attention" in parts:
        att = attention_table(brief, JOBS)
        for kind, meds in att.items():
            print(
                f"\n>>> TTNN SDPA prefill rows (target <= 10%), median |error| % of device "
                f"time, {kind}: " + ", ".join(f"{half} {v:.1f}" for half, v in meds.items())
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--brief", action="store_true", help="print only the medians")
    ap.add_argument("--parts", default="noc,matmul", help="comma list of noc, matmul, attention")
    ap.add_argument(
        "--lowering",
        choices=("fixture", "loom"),
        default="fixture",
        help="matmul Programs from the TTNN-mirroring fixture or from loom.lower",
    )
    ap.add_argument(
        "--jobs", type=int, default=1, help="simulate distinct programs in this many processes"
    )
    ap.add_argument(
        "--tables",
        default=",".join(TABLES),
        help=f"comma list of the TTNN matmul tables to compare ({', '.join(TABLES)})",
    )
    ap.add_argument(
        "--fit-matmul-overhead",
        nargs="?",
        const=",".join(str(v) for v in FIT_OVERHEADS),
        default="",
        help="only redo the fit of matmul.tile_overhead_cycles on the fit rows of the first of "
        "--tables, over these comma-separated values (default 0..8), and print it",
    )
    ap.add_argument(
        "--fit-unpack",
        default="",
        help="only grid-fit compute.unpack_bytes_per_cycle over these comma-separated "
        "values on the fit rows of the first of --tables, and print the best",
    )
    ap.add_argument(
        "--fit-noc",
        default="",
        help="only grid-fit one NoC/DRAM arch number on the fit half of the NoC/DRAM rows, "
        "e.g. dram.request_cycles=6,8,10 (both architectures) or "
        "blackhole_p150:dram.request_cycles=12,14",
    )
    args = ap.parse_args()
    global JOBS
    JOBS = max(args.jobs, 1)
    tables = args.tables.split(",")
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        ap.error(f"unknown table(s) {', '.join(unknown)}; use {', '.join(TABLES)}")
    table, fit_archs = tables[0], {TABLES[tables[0]][1]: load_arch(TABLES[tables[0]][1])}
    if args.fit_matmul_overhead:
        values = [int(v) for v in args.fit_matmul_overhead.split(",")]
        fit_arch_field(fit_archs, args.lowering, table, "matmul.tile_overhead_cycles", values)
        return
    if args.fit_noc:
        field, _, values = args.fit_noc.partition("=")
        fit_noc_field(field, [float(v) for v in values.split(",")])
        return
    if args.fit_unpack:
        values = [float(v) for v in args.fit_unpack.split(",")]
        fit_arch_field(fit_archs, args.lowering, table, "compute.unpack_bytes_per_cycle", values)
        return
    run(args.brief, args.parts.split(","), args.lowering, tables)


if __name__ == "__main__":
    main()
