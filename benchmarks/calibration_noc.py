"""Part (a) of `calibration.py`: the data-movement microbenchmarks replayed on the
simulator's transaction-level primitives (the per-size tables and ideal throughputs of
noc_ideal_throughput.csv, dram_bandwidth.csv, and two groups of noc_latencies.yaml
entries), and the measured-vs-simulated row the matmul fits use too."""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import yaml

from bench_util import CALIBRATION
from loom.arch import Arch
from loom.sim import Copy, SimParams, run_copies
from loom.sim.topology import Topology

ARCHS = {"wormhole_b0": "wormhole_n150", "blackhole": "blackhole_p150"}


@dataclass(frozen=True)
class Row:
    """One published measurement next to its simulation."""

    label: str
    measured: float
    simulated: float
    unit: str
    counted: bool = True
    """False when the measurement is itself an architecture input (circular)."""

    @property
    def error(self) -> float:
        return 100.0 * (self.simulated - self.measured) / self.measured


POOLED: list[float] = []
"""|error| of every counted NoC/DRAM row, for the pooled median."""
POOLED_FIT: list[float] = []
POOLED_HELD_OUT: list[float] = []
"""The same errors split in two fixed halves: within each table, the 1st, 3rd, 5th...
counted row in table order is in the fit half, the others are held out. The NoC/DRAM
constants fitted here (marked FITTED in the architecture files) were chosen on the fit
half only, so the held-out half checks them on rows they were not fitted on."""


def fit_half(rows: list[Row]) -> tuple[list[float], list[float]]:
    """|error| of the counted rows of one table: (fit half, held-out half)."""
    errs = [abs(r.error) for r in rows if r.counted]
    return errs[0::2], errs[1::2]


def report(title: str, rows: list[Row], brief: bool, pool: bool = False) -> float:
    print(f"\n=== {title} ({len(rows)} rows) ===")
    if not brief:
        print(f"{'row':70s} {'measured':>12s} {'simulated':>12s} {'err %':>8s}")
        for r in rows:
            flag = "" if r.counted else "  input"
            print(f"{r.label:70s} {r.measured:12.2f} {r.simulated:12.2f} {r.error:8.1f}{flag}")
    errs = [abs(r.error) for r in rows if r.counted]
    if pool:
        POOLED.extend(errs)
        fit, held = fit_half(rows)
        POOLED_FIT.extend(fit)
        POOLED_HELD_OUT.extend(held)
    med = statistics.median(errs) if errs else float("nan")
    print(f"--- {title}: median |error| {med:.1f}% over {len(errs)} rows ({rows[0].unit})")
    return med


def all_others(arch: Arch, sender: tuple[int, int] = (0, 0)) -> tuple[tuple[int, int], ...]:
    return tuple((y, x) for y in range(arch.grid_y) for x in range(arch.grid_x) if (y, x) != sender)


PEER = (1, 1)
"""Unicast partner of core (0,0): the nearest core in another row and column (the
per-size tables match the yaml's not-same-axis latencies)."""


def copy_for(primitive: str, kernel: str, arch: Arch, size: int, n: int) -> Copy | None:
    origin = (0, 0)
    if primitive.startswith("One to One"):
        return Copy("write", origin, size, n, peer=PEER)
    if primitive.startswith("One from One"):
        return Copy("read", origin, size, n, peer=PEER)
    if primitive.startswith("DRAM Interleaved"):
        return Copy("dram_read" if kernel == "Receiver" else "dram_write", origin, size, n)
    if primitive.startswith("One to All Multicast"):
        return Copy(
            "multicast", origin, size, n, dsts=all_others(arch), linked="Linked" in primitive
        )
    if primitive.startswith("One from All"):
        return Copy("gather", origin, size, n, dsts=all_others(arch))
    return None


def per_size_tables(
    params: dict[str, SimParams], archs: dict[str, Arch], brief: bool
) -> list[float]:
    groups: dict[tuple[str, str, str], list[Row]] = {}
    with open(CALIBRATION / "noc_ideal_throughput.csv") as f:
        for rec in csv.DictReader(f):
            if rec["record_type"] != "per_size_measurement":
                continue
            name = ARCHS[rec["arch"]]
            size, n = int(rec["transaction_size_bytes"]), int(rec["num_transactions"])
            c = copy_for(rec["primitive"], rec["kernel"], archs[name], size, n)
            if c is None:
                continue
            sim = run_copies(params[name], [[c]])[0]
            label = f"{rec['kernel'][:4]} {size:>7} B x {n:>3}"
            groups.setdefault((rec["primitive"], name, rec["kernel"]), []).append(
                Row(label, float(rec["latency_cycles"]), sim, "cycles")
            )
    meds = []
    for (prim, name, kernel), rows in groups.items():
        meds.append(report(f"{prim} [{name}, {kernel}]", rows, brief, pool=True))
    return meds


def ideal_table(params: dict[str, SimParams], archs: dict[str, Arch], brief: bool) -> float:
    """Ideal primitive throughputs: the large-transfer rates of the per-size patterns."""
    inputs = {"DRAM Read", "One To All (Multicast)", "One To All (Multicast + Linked)"}
    rows = []
    with open(CALIBRATION / "noc_ideal_throughput.csv") as f:
        for rec in csv.DictReader(f):
            if rec["record_type"] != "ideal_primitive":
                continue
            name = ARCHS[rec["arch"]]
            arch, prim = archs[name], rec["primitive"]
            size, n = 65536, 64
            c = ideal_copy(prim, arch, size, n)
            sim = c.size * c.count / run_copies(params[name], [[c]])[0]
            rows.append(
                Row(
                    f"{prim} [{name}]",
                    float(rec["bytes_per_cycle"]),
                    sim,
                    "B/cycle",
                    counted=prim not in inputs,
                )
            )
    return report("ideal primitive throughputs (64 x 64 KB)", rows, brief, pool=True)


def ideal_copy(prim: str, arch: Arch, size: int, n: int) -> Copy:
    origin, others = (0, 0), all_others(arch)
    table: dict[str, Callable[[], Copy]] = {
        "DRAM Read": lambda: Copy("dram_read", origin, size, n),
        "DRAM Write": lambda: Copy("dram_write", origin, size, n),
        "One To One": lambda: Copy("write", origin, size, n, peer=PEER),
        "One From One": lambda: Copy("read", origin, size, n, peer=PEER),
        "One To All (Unicast)": lambda: Copy("scatter", origin, size, n, dsts=others),
        "One To All (Multicast)": lambda: Copy(
            "multicast", origin, size, n, dsts=others, linked=False
        ),
        "One To All (Multicast + Linked)": lambda: Copy(
            "multicast", origin, size, n, dsts=others, linked=True
        ),
        "One From All": lambda: Copy("gather", origin, size, n, dsts=others),
    }
    return table[prim]()


def adjacent_cores(arch: Arch, topo: Topology) -> list[tuple[int, int]]:
    """One distinct worker core per DRAM bank, the fewest NoC0 hops from it."""
    taken: set[tuple[int, int]] = set()
    out = []
    for b in range(topo.n_banks):
        bank = topo.bank_xy(b)
        best = min(
            ((y, x) for y in range(arch.grid_y) for x in range(arch.grid_x) if (y, x) not in taken),
            key=lambda c: topo.hops(0, bank, topo.core_xy(c)),
        )
        taken.add(best)
        out.append(best)
    return out


def dram_aggregate_table(
    params: dict[str, SimParams], archs: dict[str, Arch], brief: bool
) -> float:
    """Many readers streaming DRAM at once (dram_bandwidth.csv). A barrier after every
    read is a sequence of one-read copies; trid double-buffering keeps reads in flight,
    which is one streaming copy (latency paid once)."""
    rows = []
    wh, bh = archs["wormhole_n150"], archs["blackhole_p150"]
    pw, pb = params["wormhole_n150"], params["blackhole_p150"]
    chunk, reads = 16384, 16

    def gbps(p: SimParams, arch: Arch, engines: list[list[Copy]]) -> float:
        total = sum(c.size * c.count for e in engines for c in e)
        return total / max(run_copies(p, engines)) * arch.clock_ghz

    own = [
        [Copy("dram_read", core, 8192, 256, first_bank=b, one_bank=True)]
        for b, core in enumerate(adjacent_cores(wh, Topology(pw)))
    ]
    rows.append(
        Row(
            "WH 12 readers, one per bank, bank-adjacent (u-benchmark)",
            267,
            gbps(pw, wh, own),
            "GB/s",
            counted=False,
        )
    )
    first8 = [(0, x) for x in range(8)]
    one = [
        [
            Copy("dram_read", core, chunk, 1, first_bank=(i + k) % 8, one_bank=True)
            for k in range(reads)
        ]
        for i, core in enumerate(first8)
    ]
    rows.append(
        Row(
            "BH 8 readers (first 8 cores), 16 KB reads, barrier each",
            186,
            gbps(pb, bh, one),
            "GB/s",
        )
    )
    two = [[Copy("dram_read", core, chunk, reads, first_bank=i)] for i, core in enumerate(first8)]
    rows.append(
        Row(
            "BH 8 readers (first 8 cores), 16 KB reads, 2 trids (streaming)",
            344,
            gbps(pb, bh, two),
            "GB/s",
        )
    )
    own = [
        [Copy("dram_read", core, chunk, reads, first_bank=b, one_bank=True)]
        for b, core in enumerate(adjacent_cores(bh, Topology(pb)))
    ]
    rows.append(
        Row(
            "BH 8 readers, bank-adjacent, own bank, 2 trids (streaming)",
            500,
            gbps(pb, bh, own),
            "GB/s",
        )
    )
    return report("DRAM aggregate bandwidth (dram_bandwidth.csv)", rows, brief, pool=True)


def yaml_entries(
    pred: Callable[[dict[str, int]], bool],
) -> Iterable[tuple[dict[str, int], list[tuple[int, float]]]]:
    """noc_latencies.yaml entries matching `pred`, with their measured sizes: a trailing
    run of equal latencies is a clamped copy (noc_latencies_README.md), so only the first
    of the run is kept."""
    with open(CALIBRATION / "noc_latencies.yaml") as f:
        doc = yaml.safe_load(f)
    sizes = doc["transaction_sizes"]
    for e in doc["entries"]:
        key = e["key"]
        if not pred(key):
            continue
        lat = [float(v) for v in e["latencies"]]
        end = len(lat)
        while end > 1 and lat[end - 1] == lat[end - 2]:
            end -= 1
        yield key, list(zip(sizes[:end], lat[:end], strict=True))


def all_cores_dram_table(
    params: dict[str, SimParams], archs: dict[str, Arch], brief: bool
) -> float:
    """Every core of the grid reads (ALL_FROM_ALL) or writes (ALL_TO_ALL) a DRAM-interleaved
    buffer at once, on NoC0 or NoC1: the contention of whole-grid DRAM traffic.

    The test starts every core from a grid-wide barrier (TT-Metal's data-movement
    barrier_sync: each core bumps a semaphore on one coordinator core, then polls it with
    NoC reads). The coordinator's NIU serves the polls one at a time, so the cores leave
    the barrier one poll apart (a request in and a response out, 2 x noc.niu_cycles); the
    published latency is taken to span that spread: core i starts at i x 2 niu_cycles and
    the row's time is the last core's finish. That reading is inferred, not documented:
    one 64 B transaction takes ~500 cycles on an idle chip but ~1,100 (64 Wormhole cores)
    and ~1,700 (110 Blackhole cores) here, and 2 niu_cycles per core (nothing fitted)
    accounts for that floor; with every core at cycle 0 the simulated rows of one small
    transaction come out 60% short."""
    rows = []
    kinds = {5: "dram_read", 4: "dram_write"}

    def pick(k: dict[str, int]) -> bool:
        return k.get("memory") == 1 and k.get("pattern") in kinds

    for key, points in yaml_entries(pick):
        name = "blackhole_p150" if key.get("arch", 2) == 3 else "wormhole_n150"
        arch, n, noc = archs[name], key.get("num_transactions", 1), key.get("noc_index", 0)
        cores = [(y, x) for y in range(arch.grid_y) for x in range(arch.grid_x)]
        n_banks = len(arch.dram.banks)
        for size, lat in points:
            engines = [
                [Copy(kinds[key["pattern"]], c, size, n, noc=noc, first_bank=i % n_banks)]
                for i, c in enumerate(cores)
            ]
            poll = 2 * arch.noc.niu_cycles
            sim = max(run_copies(params[name], engines, [i * poll for i in range(len(cores))]))
            label = f"{name[:2]} {kinds[key['pattern']]:10s} NoC{noc} {size:>6} B x {n:>3}"
            rows.append(Row(label, lat, sim, "cycles"))
    return report(
        "all cores to/from DRAM (noc_latencies.yaml ALL_TO_ALL / ALL_FROM_ALL)",
        rows,
        brief,
        pool=True,
    )


def one_bank_table(params: dict[str, SimParams], brief: bool) -> float:
    """One core reading (ONE_FROM_ONE) or writing (ONE_TO_ONE) one DRAM bank (sharded)."""
    rows = []
    kinds = {0: "dram_read", 1: "dram_write"}

    def pick(k: dict[str, int]) -> bool:
        return k.get("memory") == 2 and k.get("pattern", 1) in kinds

    for key, points in yaml_entries(pick):
        name = "blackhole_p150" if key.get("arch", 2) == 3 else "wormhole_n150"
        n, noc = key.get("num_transactions", 1), key.get("noc_index", 0)
        kind = kinds[key.get("pattern", 1)]
        for size, lat in points:
            c = Copy(kind, (0, 0), size, n, noc=noc, first_bank=0, one_bank=True)
            label = f"{name[:2]} {kind:10s} NoC{noc} {size:>6} B x {n:>3}"
            rows.append(Row(label, lat, run_copies(params[name], [[c]])[0], "cycles"))
    return report(
        "one core, one DRAM bank (noc_latencies.yaml DRAM_SHARDED)", rows, brief, pool=True
    )
