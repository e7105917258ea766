"""Part (c) of the calibration: TTNN's SDPA prefill on Blackhole p100a, replayed on loom.sim.

`ttnn_sdpa_prefill_blackhole.csv` (../shared/calibration/, its README says where each
number comes from) holds one published number per row. The timed rows are those whose
`metric` is `device_time` (us), `device_cycles` or `device_kernel_cycles` (cycles at the
row's clock): each is a device kernel duration. A timed row is replayed when its
configuration is complete and Loom models the kernel it timed:

- the shape: B x n_q_heads, S = seq_len, D = head_dim_qk; TTNN's GQA (8 KV heads) reads
  each KV head once per query head's core, as Loom's kernel (one KV head per query head)
  does when every core reads its own K/V, so the bytes each core reads are the same;
- TTNN's configuration: `loom.baselines.ttnn_sdpa.sdpa_policy` with the row's
  (q_chunk, k_chunk) on the row's grid ((8,8) or 64 cores: 8 x 8; (11,10), 110 cores or
  the whole p100a: 11 x 10), `flash_attention_causal` when causal, `flash_attention`
  otherwise (TTNN's K/V chains for the non-causal kernel come with the policy);
- TTNN's kernel where it computes differently from Loom's (`loom.baselines.sdpa_program`):
  its causal mask is generated in L1 by its writer kernel (the replay drops the DRAM
  reads of the tile indices Loom's causal kernel computes its mask from) and added to
  the diagonal block only (the replay drops Loom's mask arithmetic on every block), and
  its exp takes the softmax scale (the replay drops Loom's separate scale multiply);
- TTNN's data formats: Q, K and V in the row's dtype (bfloat8_b -> bfp8), every
  intermediate and statistics buffer in Float16_b (bf16; the program factory's `im_df`
  and `stats_df`), the output in bf16; the row's math fidelity.

Left out, with the reason printed: rows whose chunk sizes are not published, rows that
restate another row's measurement (the `device_cycles` of a `device_time` row of the same
source and configuration), and rows timing TTNN's causal K/V forwarding chains (a kernel
change Loom's TTNN policy does not have). The fp32_dest_acc_en flag and the streaming or
non-streaming kernel are printed with each row; the simulated programs do not differ by
them (Loom has one attention kernel), so their effect shows as error.

Two figures per row: the replay's kernel time as simulated, and work-matched: the
simulated time per block step (query chunk x key chunk) of the replay's busiest core
times the block steps of TTNN's busiest core (`ttnn_wall_steps`, `loom_wall_steps`).
TTNN's current SDPA spreads the flat (batch, head, query chunk) work over the cores in
contiguous runs, causal runs in zigzag order. The causal replay runs that deal (the
policy's `Policy.deal`, lowered by `loom.ir.deal.dealt_indices`), so its busiest core
does TTNN's block steps and the two figures agree; the non-causal one hands a core query
chunks round-robin (`loom.ir.deal`) over a 2-D mapping that shares K/V along TTNN's
chains, one more unit than TTNN's busiest core at 110 cores (352 block steps against
320). Work matching removes what policy difference is left and keeps everything the
simulator decides (per-step compute, K/V streaming, contention).

The fixed fit/held-out split (`fit_half`): the distinct configurations in file order
alternate fit, held out, fit, ... (rows of one configuration, measured in different
sources, fall in the same half). No constant is fitted on it by this script; the halves
are reported so that any later fit is checked on rows it did not see.

    PYTHONPATH=src .venv/bin/python benchmarks/calibration.py --parts attention [--jobs N]
"""

from __future__ import annotations

import csv
import dataclasses
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bench_util import CALIBRATION, forked_map
from loom.arch import Arch, load_arch
from loom.ir.program import Program
from loom.ir.schedule import Schedule
from loom.symbolic import Const, Sym

SDPA_FILE = "ttnn_sdpa_prefill_blackhole.csv"
ARCH = "blackhole_p100a"
TIMED = {"device_time": 1.0, "device_cycles": 0.0, "device_kernel_cycles": 0.0}
"""Metrics that are a device kernel duration -> us per unit (0: cycles at the row's clock)."""
DTYPES = {"bfloat8_b": "bfp8", "bfloat16": "bf16"}
GRIDS = {"(8,8)": (8, 8), "64 cores": (8, 8), "(11,10)": (11, 10), "110 cores": (11, 10)}
"""Grid texts of the file -> (x, y); a row naming no grid ran on the whole p100a (11 x 10)."""
FULL_GRID = (11, 10)


@dataclass(frozen=True)
class SdpaRow:
    """One timed row of the file with the configuration it is replayed under."""

    line: int
    """Line of the row in the CSV (header = 1)."""
    metric: str
    measured_us: float
    grid: tuple[int, int]
    causal: bool
    shape: tuple[int, int, int, int]
    """(B, H, S, D): query heads, sequence, head dim."""
    chunks: tuple[int, int]
    dtype: str
    fidelity: str
    fp32_acc: bool
    kernel: str
    """TTNN's kernel path: "streaming" or "non-streaming"."""
    source: str

    @property
    def config(self) -> tuple[object, ...]:
        """What decides the replayed program (and the fit/held-out half)."""
        return (self.grid, self.causal, self.shape, self.chunks, self.dtype, self.fidelity,
                self.fp32_acc, self.kernel)  # fmt: skip

    @property
    def program_key(self) -> tuple[object, ...]:
        """What the simulated program depends on (the accumulation flag and kernel path
        are not modelled)."""
        return (self.grid, self.causal, self.shape, self.chunks, self.dtype, self.fidelity)

    @property
    def label(self) -> str:
        s = self.shape[2]
        q, k = self.chunks
        return (
            f"{'causal' if self.causal else 'full  '} S={s:<5d} {self.grid[0]}x{self.grid[1]} "
            f"q{q}/k{k} {self.dtype} {self.fidelity} fp32acc={'y' if self.fp32_acc else 'n'} "
            f"{'non-str' if self.kernel == 'non-streaming' else 'stream'}"
        )


def sdpa_records(path: Path | None = None) -> list[dict[str, str]]:
    with open(path or CALIBRATION / SDPA_FILE) as f:
        return list(csv.DictReader(f))


def _grid(text: str) -> tuple[int, int]:
    text = text.strip()
    for key, grid in GRIDS.items():
        if text.startswith(key):
            return grid
    return FULL_GRID  # "p100a ...", "" and the like: the whole chip


def _flag(text: str) -> bool | None:
    """'True', 'False', 'True (inferred ...)', 'False (streaming kernel)' -> bool; '' -> None."""
    word = text.strip().split(" ")[0]
    return {"True": True, "False": False}.get(word)


def _int(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


def _kernel(rec: dict[str, str], fp32_acc: bool) -> str:
    path = rec["kernel_path"].lower()
    if "non-streaming" in path:
        return "non-streaming"
    if path.startswith("streaming"):
        return "streaming"
    # none named: the program factory's choice (fp32_dest_acc_en selects non-streaming)
    return "non-streaming" if fp32_acc else "streaming"


def parse_row(line: int, rec: dict[str, str]) -> SdpaRow | str:
    """The row to replay, or why this record is not replayed."""
    metric = rec["metric"]
    if metric not in TIMED:
        return f"metric {metric} is a counter, not a device time"
    chains = "forwarding chains" in rec["kernel_path"] or "forwarding chains" in rec["notes"]
    if chains and rec["causal"].startswith("True"):
        return "times TTNN's causal K/V forwarding chains, which its modelled policy lacks"
    nums = [_int(rec[c]) for c in ("batch", "n_q_heads", "seq_len", "head_dim_qk")]
    q, k = _int(rec["q_chunk"]), _int(rec["k_chunk"])
    causal = _flag(rec["causal"])
    if q is None or k is None:
        return "chunk sizes not published"
    if any(n is None for n in nums) or causal is None or rec["dtype_q"] not in DTYPES:
        return "configuration incomplete"
    fp32_acc = bool(_flag(rec["fp32_dest_acc_en"]))  # not given: TTNN's default, off
    unit = TIMED[metric] or 1.0 / (1000.0 * float(rec["clock_ghz"]))
    b, h, s, d = (int(n) for n in nums if n is not None)
    return SdpaRow(
        line=line,
        metric=metric,
        measured_us=float(rec["value"]) * unit,
        grid=_grid(rec["grid"]),
        causal=causal,
        shape=(b, h, s, d),
        chunks=(q, k),
        dtype=DTYPES[rec["dtype_q"]],
        fidelity=rec["math_fidelity"],
        fp32_acc=fp32_acc,
        kernel=_kernel(rec, fp32_acc),
        source=rec["source"].rsplit("/", 1)[-1],
    )


def timed_rows(records: list[dict[str, str]]) -> tuple[list[SdpaRow], list[tuple[int, str]]]:
    """The rows to replay, and (line, reason) of every timed record left out. A
    `device_cycles` row of the same source and configuration as a `device_time` row is the
    same measurement restated: only the `device_time` row is kept."""
    rows: list[SdpaRow] = []
    skipped: list[tuple[int, str]] = []
    for i, rec in enumerate(records, start=2):
        got = parse_row(i, rec)
        if isinstance(got, SdpaRow):
            rows.append(got)
        elif rec["metric"] in TIMED:
            skipped.append((i, got))
    timed = {(r.source, r.config) for r in rows if r.metric == "device_time"}
    kept = []
    for r in rows:
        if r.metric == "device_cycles" and (r.source, r.config) in timed:
            skipped.append((r.line, "restates the device_time row of its source"))
        else:
            kept.append(r)
    return kept, sorted(skipped)


def fit_half(rows: list[SdpaRow]) -> set[tuple[object, ...]]:
    """The fixed split: distinct configurations in file order alternate fit, held out,
    fit, ... (the 1st, 3rd, 5th... are the fit half)."""
    order: list[tuple[object, ...]] = []
    for r in rows:
        if r.config not in order:
            order.append(r.config)
    return set(order[0::2])


# ----- replay ---------------------------------------------------------------------------------


def ttnn_formats(program: Program, dtype: str) -> Program:
    """`program` with TTNN's data formats: Q, K, V and their L1 blocks in `dtype`, the
    intermediates and statistics in Float16_b (bf16), everything else as lowered."""
    io = {"q", "k", "v"}

    def buffer_dtype(b):  # type: ignore[no-untyped-def]
        if b.role == "load" and b.name.removesuffix("_tile") in io:
            return dtype
        return "bf16" if b.role in ("compute", "state") else b.dtype

    return dataclasses.replace(
        program,
        tensors=tuple(
            dataclasses.replace(t, dtype=dtype) if t.name in io else t for t in program.tensors
        ),
        buffers=tuple(dataclasses.replace(b, dtype=buffer_dtype(b)) for b in program.buffers),
    )


def k_steps(row: SdpaRow, q_chunk: int) -> int:
    """Key chunks a query chunk visits: up to its diagonal when causal, all otherwise."""
    q, k = row.chunks
    s = row.shape[2]
    return -(-(q_chunk + 1) * q // k) if row.causal else -(-s // k)


def ttnn_wall_steps(row: SdpaRow) -> int:
    """Block steps (query chunk x key chunk) of TTNN's busiest core. TTNN's current SDPA
    flattens the (batch, head, query chunk) work and gives each core a contiguous run of
    ceil(total / cores) of it; causal runs visit each head's chunks in zigzag order (0,
    N-1, 1, N-2, ...), so a run pairs light and heavy chunks
    (`loom.baselines.ttnn_sdpa.ZIGZAG_SOURCE`). Counted here from the rule, independently
    of the lowering's `dealt_indices`, which the causal replay runs."""
    b, h, s, _ = row.shape
    n = -(-s // row.chunks[0])
    total = b * h * n
    cores = row.grid[0] * row.grid[1]
    per = -(-total // cores)

    def chunk(flat: int) -> int:
        pos = flat % n
        if not row.causal:
            return pos
        return pos // 2 if pos % 2 == 0 else n - 1 - pos // 2

    runs = (range(c * per, min((c + 1) * per, total)) for c in range(cores))
    return max(sum(k_steps(row, chunk(f)) for f in run) for run in runs)


def ttnn_mean_steps(row: SdpaRow) -> float:
    """Block steps per core, averaged over TTNN's cores: the published per-core math
    counters are per-core means (the 110-core one equals the 64-core one per step this
    way, while the busiest core's steps would put it under the tile-matmul floor)."""
    b, h, s, _ = row.shape
    n = -(-s // row.chunks[0])
    return b * h * sum(k_steps(row, c) for c in range(n)) / (row.grid[0] * row.grid[1])


def loom_wall_steps(row: SdpaRow, schedule: Schedule) -> int:
    """Block steps of the busiest core of the Loom mapping that replays `row`. No
    `Schedule.deal`: a core takes the query chunks the lowering deals it (`loom.ir.deal`:
    `core + wave * q_cores`, back and forth over the waves when causal; padding chunks past
    the end included: they run their key loop too) for each of its `waves['tile_b']`
    heads. Dealt (causal: TTNN's zigzag runs): the query chunk the lowering's
    `dealt_indices` gives each core at each wave."""
    from loom.ir.deal import dealt_indices, logical_index
    from loom.ir.program import CORE_X, CORE_Y

    waves, mapping = schedule.waves, schedule.mapping
    if not schedule.deal:
        q_cores = mapping.spatial_factor("tile_m")

        def chunk_of(core: int, wave: int) -> int:
            index = logical_index(Const(core), Const(wave), q_cores, row.causal)
            assert isinstance(index, Const)
            return index.value

        per_head = max(
            sum(k_steps(row, chunk_of(core, w)) for w in range(waves["tile_m"]))
            for core in range(q_cores)
        )
        return waves["tile_b"] * per_head
    b, h, s, _ = row.shape
    wave = Sym("tile_m_wave", 0, max(waves["tile_m"] - 1, 0), 1, "index")
    blocks = (("tile_b", b * h), ("tile_m", -(-s // row.chunks[0])))
    chunk = dealt_indices(mapping, blocks, wave)["tile_m"]
    return max(
        sum(
            k_steps(row, chunk.eval({CORE_X.name: x, CORE_Y.name: y, wave.name: w}))
            for w in range(waves["tile_m"])
        )
        for y in range(mapping.cores_y)
        for x in range(mapping.cores_x)
    )


def _room_for(arch: Arch) -> Arch:
    """`arch` with room in L1 for the lowering's check: the lowering sizes Loom's own formats
    (bf16 inputs, fp32 intermediates), about twice TTNN's, and would refuse chunks that ran
    on the device (the published rows did run; the simulator does not use the capacity)."""
    return dataclasses.replace(arch, l1_usable_bytes=4 * arch.l1_bytes)


def sdpa_program(row: SdpaRow, arch: Arch) -> tuple[Program, int]:
    """The lowered program of TTNN's SDPA configuration of `row` (see the module doc),
    and its busiest core's block steps (`loom_wall_steps`)."""
    from loom.baselines.build import build_schedule
    from loom.baselines.sdpa_program import source_program
    from loom.baselines.ttnn_sdpa import sdpa_policy
    from loom.dataflow import build_buffers
    from loom.flows.helion import run_frontend
    from loom.flows.lowered import lower_schedule
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel, source_kernel

    b, h, s, d = row.shape
    shape = {"B": b, "H": h, "S": s, "D": d}
    kernel = "flash_attention_causal" if row.causal else "flash_attention"
    log = StageLog()
    noc_x = tuple(arch.worker_noc_x[: row.grid[0]])
    policy = sdpa_policy(shape, row.grid, row.causal, noc_x, row.chunks)
    spec = source_kernel(policy.kernel) if policy.kernel else resolve_kernel(kernel)
    tile = run_frontend(spec, shape, log)
    buffered = build_buffers(tile)
    schedule = build_schedule(buffered, arch.name, shape, row.fidelity, policy)
    lowered = lower_schedule(tile, buffered, schedule, _room_for(arch), log).lowered
    program = source_program(policy, ttnn_formats(lowered, row.dtype))
    return program, loom_wall_steps(row, schedule)


@dataclass(frozen=True)
class Replay:
    """One simulated configuration: kernel time and the busiest core's compute share."""

    kernel_us: float
    compute_busy: float
    seconds: float
    wall_steps: int
    """Block steps of the replayed mapping's busiest core."""
    step_math: float
    """Math cycles of one block step (`step_math`)."""


def step_math(program: Program, arch: Arch) -> float:
    """The simulator's math cycles (FPU and SFPU, which it serialises) of one block step:
    the compute statements of the key loop's body over the score matmuls among them (a
    lowered body may hold more than one step). Beside TTNN's FPU + SFPU counters it says
    whether a gap is in the math or in the time around it."""
    from loom.ir.program import Compute, Loop, MatmulExpr, Stmt
    from loom.sim.compute_cost import CostModel
    from loom.sim.params import from_arch
    from loom.sim.simulate import SimOptions

    costs = CostModel(arch, from_arch(arch), program, SimOptions().packer_l1_acc)

    def flat(stmts: tuple[Stmt, ...]) -> list[Stmt]:
        """Statements of `stmts` and of their scopes, loops excepted."""
        out: list[Stmt] = []
        for st in stmts:
            out.append(st)
            if not isinstance(st, Loop):
                for name in ("body", "then", "orelse"):
                    out.extend(flat(getattr(st, name, ())))
        return out

    def score(st: Stmt) -> bool:
        return isinstance(st, Compute) and isinstance(st.expr, MatmulExpr) and st.expr.transpose_rhs

    def deepest(stmts: tuple[Stmt, ...]) -> list[Stmt] | None:
        """The flat body of the innermost loop holding a score matmul."""
        for loop in (st for st in flat(stmts) if isinstance(st, Loop)):
            inner = deepest(loop.body)
            if inner is not None:
                return inner
            if any(score(st) for st in flat(loop.body)):
                return flat(loop.body)
        return None

    body = deepest(program.compute)
    if body is not None:
        math = sum(costs.cost(st).math_cycles for st in body if isinstance(st, Compute))
        return math / sum(score(st) for st in body)
    return float("nan")


def replay(row: SdpaRow, arch: Arch) -> Replay | str:
    """The simulation of `row`'s configuration, or why it could not be built."""
    from loom.errors import LoomError
    from loom.sim import simulate

    start = time.perf_counter()
    try:
        program, steps = sdpa_program(row, arch)
    except LoomError as err:
        return f"line {row.line}: not built: {' '.join(str(err).split())[:160]}"
    result = simulate(program, arch)
    busy = {e.engine: e.max for e in result.engine_busy}
    took = time.perf_counter() - start
    print(f"  simulated {row.label} in {took:.0f} s", flush=True)
    return Replay(
        arch.cycles_to_us(result.kernel_cycles),
        busy.get("compute", 0.0),
        took,
        steps,
        step_math(program, arch),
    )


def replays(rows: list[SdpaRow], arch: Arch, jobs: int) -> dict[tuple[object, ...], Replay | str]:
    """Each distinct program simulated once, largest first (the workers finish together)."""
    distinct = {r.program_key: r for r in rows}
    order = sorted(distinct.values(), key=_work, reverse=True)
    done = forked_map(lambda i: replay(order[i], arch), len(order), jobs)
    return {r.program_key: rep for r, rep in zip(order, done, strict=True)}


def _work(row: SdpaRow) -> float:
    """Block steps the replay simulates (its cost, for ordering)."""
    b, h, s, _ = row.shape
    q, k = row.chunks
    steps = (s / q) * (s / k)
    return b * h * (steps / 2 if row.causal else steps)


def error_pct(sim: float, meas: float) -> float:
    return 100.0 * (sim - meas) / meas


def matched_us(row: SdpaRow, rep: Replay) -> float:
    """The simulated time per block step of the replay's busiest core times TTNN's busiest
    core's block steps: the replay with TTNN's work distribution, which a Loom mapping
    cannot express (`ttnn_wall_steps`)."""
    return rep.kernel_us * ttnn_wall_steps(row) / rep.wall_steps


def medians(
    rows: list[SdpaRow], fit: set[tuple[object, ...]], sim: dict[int, float]
) -> dict[str, float]:
    """Median |error| % of `sim` (us by row line) over all rows and each half."""
    out = {}
    for name, chosen in (
        ("all", rows),
        ("fit half", [r for r in rows if r.config in fit]),
        ("held-out half", [r for r in rows if r.config not in fit]),
    ):
        errs = [abs(error_pct(sim[r.line], r.measured_us)) for r in chosen]
        out[name] = statistics.median(errs) if errs else float("nan")
    return out


def attention_table(
    brief: bool, jobs: int = 1, path: Path | None = None
) -> dict[str, dict[str, float]]:
    """Replay every timed row, print the table and the medians; return median |error| %
    (as simulated, and work-matched) over all rows and each half."""
    arch = load_arch(ARCH)
    rows, skipped = timed_rows(sdpa_records(path))
    fit = fit_half(rows)
    start = time.perf_counter()
    built = replays(rows, arch, jobs)
    took = time.perf_counter() - start
    sims = {k: v for k, v in built.items() if isinstance(v, Replay)}
    for why in sorted({v for v in built.values() if isinstance(v, str)}):
        print(f"  {why}")
    rows = [r for r in rows if r.program_key in sims]
    print(
        f"\n=== TTNN SDPA prefill on {arch.name} ({SDPA_FILE}): {len(rows)} timed rows, "
        f"{len(sims)} distinct programs simulated in {took:.0f} s ==="
    )
    raw = {r.line: sims[r.program_key].kernel_us for r in rows}
    matched = {r.line: matched_us(r, sims[r.program_key]) for r in rows}
    if not brief:
        print(
            f"{'line':>4s} {'configuration':56s} {'half':>4s} {'source':>6s} {'meas us':>8s} "
            f"{'sim us':>8s} {'err %':>6s} {'steps':>9s} {'matched':>8s} {'err %':>6s} "
            f"{'comp':>5s}"
        )
        for r in rows:
            rep = sims[r.program_key]
            print(
                f"{r.line:4d} {r.label:56s} {'fit' if r.config in fit else 'held':>4s} "
                f"{r.source:>6s} {r.measured_us:8.1f} {raw[r.line]:8.1f} "
                f"{error_pct(raw[r.line], r.measured_us):6.1f} "
                f"{ttnn_wall_steps(r):4d}/{rep.wall_steps:<4d} {matched[r.line]:8.1f} "
                f"{error_pct(matched[r.line], r.measured_us):6.1f} {rep.compute_busy:5.2f}"
            )
        for line, why in skipped:
            print(f"  line {line}: not replayed ({why})")
        print(
            "  steps: block steps of the busiest core, TTNN's / the replayed mapping's; "
            "matched = sim us x their ratio"
        )
    if not brief:
        counters(sdpa_records(path), sims, arch)
    out = {"as simulated": medians(rows, fit, raw), "work-matched": medians(rows, fit, matched)}
    for kind, meds in out.items():
        for name, value in meds.items():
            print(f"  {kind:12s} {name:14s} median |error| {value:5.1f}%")
    return out


def counters(
    records: list[dict[str, str]], sims: dict[tuple[object, ...], Replay], arch: Arch
) -> None:
    """The published per-step and per-tile counters beside the simulator's: cycles per
    block step of the busiest core (the replay's time over its block steps), math cycles
    per block step (TTNN's per-core FPU + SFPU counter over its mean block steps per
    core, `ttnn_mean_steps`; the simulator's `step_math`), cycles per tile-matmul and per
    exp tile (the architecture's table; exp was fitted from these counters, so that row
    is an input)."""
    print("  counters (published vs simulated):")
    for i, rec in enumerate(records, start=2):
        metric, value = rec["metric"], rec["value"]
        if metric == "MATH_COUNTER_cycles":
            row = parse_row(i, {**rec, "metric": "device_kernel_cycles"})
            rep = sims.get(row.program_key) if isinstance(row, SdpaRow) else None
            if isinstance(row, SdpaRow) and rep is not None:
                meas = float(value) / ttnn_mean_steps(row)
                print(
                    f"    line {i:2d} math per k step  {row.label:58s} {meas:8.0f} "
                    f"{rep.step_math:8.0f} {error_pct(rep.step_math, meas):6.1f}%"
                )
        elif metric == "per_k_step_cycles":
            row = parse_row(i, {**rec, "metric": "device_kernel_cycles"})
            rep = sims.get(row.program_key) if isinstance(row, SdpaRow) else None
            if isinstance(row, SdpaRow) and rep is not None:
                sim = rep.kernel_us * 1000.0 * arch.clock_ghz / rep.wall_steps
                print(
                    f"    line {i:2d} cycles per k step {row.label:58s} {float(value):8.0f} "
                    f"{sim:8.0f} {error_pct(sim, float(value)):6.1f}%"
                )
        elif metric == "FPU_COUNTER_per_tile_MAC":
            fid, sim = rec["math_fidelity"], arch.matmul.cycles(rec["math_fidelity"])
            what = f"FPU cycles per tile-matmul, {fid} k{rec['k_chunk']}"
            print(
                f"    line {i:2d} {what:76s} {float(value):8.2f} {sim:8.2f} "
                f"{error_pct(sim, float(value)):6.1f}%"
            )
        elif metric == "exp_cycles_per_tile":
            sim = arch.compute.eltwise("exp")
            what = "SFPU cycles per exp tile"
            print(
                f"    line {i:2d} {what:76s} {float(value):8.0f} {sim:8.0f} "
                "(input: fitted from this counter)"
            )
