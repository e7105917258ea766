"""The paper's Table 2 (geomean speed-up per kernel x arch) and Table 3 (compile cost,
top-1 and top-5) from evaluation rows, as text.

Speed-up of A over B on one case = B's simulated cycles / A's. "loom" is the solver's
pick (rank 1); "loom-top5" the fastest of its top five in the simulator; "tileloom" the
fastest of its five profiled candidates and "tileloom-top1" its model's pick. The TTNN
side of the headline line is the strongest TTNN a case has ("ttnn-strongest": the fewest
cycles of its no-config default and the configured baselines of `CONFIGURED`: the tuned
matmul, the model code's and the tuned SDPA and SDPA-decode configs); the no-config
default of each kernel (matmul without program config, SDPA and SDPA-decode defaults)
follows as a labelled second line, and each configured baseline present gets its own
lines. Decode adds Loom compiled with the models' bfloat8_b KV cache ("loom-kv-bfp8")
over the models' config, which reads the same bytes (the headline compares Loom's bf16
cache with the strongest TTNN, that config included).

Beside the ratios, each kernel's lines end with the fraction of its roofline (the shortest
time its compulsory work allows on the whole chip, `loom.model.roofline`) that Loom's
pick, the strongest TTNN and TileLoom reach: the geomean over the shapes of roofline time
/ simulated kernel time, and the resource that bounds most of the shapes.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable

from loom.baselines.ttnn_layer import LAYER_BASELINES
from loom.eval.rows import ResultRow

TTNN = {
    "gemm": "ttnn-matmul-oob",
    "flash_attention": "ttnn-sdpa",
    "flash_attention_causal": "ttnn-sdpa",
    "flash_decode": "ttnn-sdpa-decode",
    **LAYER_BASELINES,
}
CONFIGURED = {
    "gemm": ("ttnn-matmul-tuned",),
    "flash_attention": ("ttnn-sdpa-models", "ttnn-sdpa-tuned"),
    "flash_attention_causal": ("ttnn-sdpa-models", "ttnn-sdpa-tuned"),
    "flash_decode": ("ttnn-sdpa-decode-models", "ttnn-sdpa-decode-tuned"),
    **{k: () for k in LAYER_BASELINES},
    "softmax": ("ttnn-softmax-sharded",),
}
"""The TTNN baselines with a program config, per kernel (`loom.eval.run` builds them)."""
STRONGEST = "ttnn-strongest"
SAME_FORMATS = {"flash_decode": (("loom-kv-bfp8", "ttnn-sdpa-decode-models"),)}
"""Loom compiled with a baseline's tensor formats (`loom.eval.run.SAME_FORMATS`), beside
the baseline that runs them: the models' decode reads a bfloat8_b KV cache."""
CaseKey = tuple[str, str, str]


def pick(rows: Iterable[ResultRow]) -> dict[CaseKey, dict[str, ResultRow]]:
    """Per case: the row each named policy stands for (see the module docstring)."""
    out: dict[CaseKey, dict[str, ResultRow]] = defaultdict(dict)
    best: dict[tuple[CaseKey, str], ResultRow] = {}
    for r in rows:
        if r.status != "ok" or r.cycles <= 0:
            continue
        if r.policy in ("loom", "tileloom"):
            if r.rank == 1:
                out[r.case_key]["loom" if r.policy == "loom" else "tileloom-top1"] = r
            k = (r.case_key, "loom-top5" if r.policy == "loom" else "tileloom")
            if k not in best or r.cycles < best[k].cycles:
                best[k] = r
        elif r.policy != "loom-neighbour":
            out[r.case_key][r.policy] = r
    for (key, name), r in best.items():
        out[key][name] = r
    for key, pol in out.items():
        ttnn = [pol[n] for n in (TTNN.get(key[0], ""), *CONFIGURED.get(key[0], ())) if n in pol]
        if ttnn:
            pol[STRONGEST] = min(ttnn, key=lambda r: r.cycles)
    return dict(out)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def speedups(
    picked: dict[CaseKey, dict[str, ResultRow]], kernel: str, arch: str, a: str, b: str
) -> list[float]:
    out = []
    for (k, ar, _), pol in sorted(picked.items()):
        if k == kernel and ar == arch and a in pol and b in pol:
            out.append(pol[b].cycles / pol[a].cycles)
    return out


def _cell(values: list[float]) -> str:
    return f"{geomean(values):.3f}x ({len(values)})" if values else "-"


def table2(rows: Iterable[ResultRow]) -> str:
    """Geomean speed-up per kernel x arch: loom over each baseline, TileLoom over TTNN."""
    picked = pick(rows)
    archs = sorted({a for _, a, _ in picked})
    kernels = [k for k in TTNN if any(kk == k for kk, _, _ in picked)]
    lines = ["Table 2: geometric-mean speed-up (simulated cycles; number of shapes)", ""]
    head = f"{'kernel':22} {'method':44}" + "".join(f" {a:>22}" for a in archs)
    lines += [head, "-" * len(head)]
    for kernel in kernels:
        ttnn = TTNN[kernel]
        comparisons = [
            ("loom", STRONGEST),
            ("loom-top5", STRONGEST),
            ("loom", ttnn),
            ("loom-top5", ttnn),
            ("tileloom", ttnn),
            ("loom", "tileloom"),
        ]
        for tuned in CONFIGURED[kernel]:
            if any(tuned in p for (k, _, _), p in picked.items() if k == kernel):
                comparisons += [("loom", tuned), (tuned, ttnn)]
        for loom, base in SAME_FORMATS.get(kernel, ()):
            if any(loom in p for (k, _, _), p in picked.items() if k == kernel):
                comparisons += [(loom, base), (loom, STRONGEST)]
        for a, b in comparisons:
            cells = "".join(f" {_cell(speedups(picked, kernel, arch, a, b)):>22}" for arch in archs)
            label = f"{a} / {b}" + (" (no config)" if b == ttnn and a.startswith("loom") else "")
            lines.append(f"{kernel:22} {label:44}{cells}")
        for policy in ("loom", STRONGEST, "tileloom"):
            cells = "".join(f" {roofline_cell(picked, kernel, arch, policy):>22}" for arch in archs)
            lines.append(f"{kernel:22} {'% of roofline: ' + policy:44}{cells}")
    return "\n".join(lines) + "\n"


def roofline_cell(
    picked: dict[CaseKey, dict[str, ResultRow]], kernel: str, arch: str, policy: str
) -> str:
    """Geomean fraction of the roofline `policy` reaches on `kernel` x `arch`, the
    resource bounding most shapes, and the number of shapes ("-" when none)."""
    rows = [
        pol[policy]
        for (k, ar, _), pol in sorted(picked.items())
        if k == kernel and ar == arch and policy in pol and pol[policy].roofline_fraction > 0
    ]
    if not rows:
        return "-"
    bound = Counter(r.roofline_bound for r in rows).most_common(1)[0][0]
    return f"{100 * geomean([r.roofline_fraction for r in rows]):.1f}% {bound} ({len(rows)})"


def table3(rows: Iterable[ResultRow]) -> str:
    """Compile cost (mean seconds per GEMM shape) and the geomean speed-up over TTNN of
    the top-1 pick and of the best of the top five, for Loom and TileLoom."""
    rows = list(rows)
    picked = pick(rows)
    archs = sorted({r.arch for r in rows if r.kernel == "gemm"})
    lines = ["Table 3: compilation cost and resulting GEMM performance (vs ttnn-matmul-oob)", ""]
    if not archs:
        return "\n".join([*lines, "no GEMM case in these results"]) + "\n"
    head = (
        f"{'arch':22} {'':26} {'TileLoom top-1':>15} {'top-5':>9} {'Loom top-1':>12} {'top-5':>9}"
    )
    lines += [head, "-" * len(head)]
    for arch in archs:
        t = {name: _seconds(rows, arch, name) for name in ("tileloom", "loom")}
        s = {
            name: geomean(speedups(picked, "gemm", arch, name, "ttnn-matmul-oob"))
            for name in ("tileloom-top1", "tileloom", "loom", "loom-top5")
        }
        lines.append(
            f"{arch:22} {'compile time (s, mean)':26} {t['tileloom'][0]:>15.2f} "
            f"{t['tileloom'][1]:>9.2f} {t['loom'][0]:>12.2f} {t['loom'][1]:>9.2f}"
        )
        lines.append(
            f"{'':22} {'speed-up (geomean)':26} {s['tileloom-top1']:>14.3f}x "
            f"{s['tileloom']:>8.3f}x {s['loom']:>11.3f}x {s['loom-top5']:>8.3f}x"
        )
    lines += [
        "",
        "top-1: Loom's compile (frontend to schedule); TileLoom's enumeration and roofline",
        "ranking plus one simulation. top-5: the same plus lowering and simulating all five",
        "(the simulator stands in for profiling on the card).",
    ]
    return "\n".join(lines) + "\n"


def _seconds(rows: list[ResultRow], arch: str, policy: str) -> tuple[float, float]:
    """Mean per GEMM shape of (top-1, top-5) seconds for `policy`."""
    per_case: dict[str, list[ResultRow]] = defaultdict(list)
    for r in rows:
        if r.kernel == "gemm" and r.arch == arch and r.policy == policy:
            per_case[r.shape].append(r)
    if not per_case:
        return (float("nan"), float("nan"))
    top1, top5 = [], []
    for case_rows in per_case.values():
        base = sum(r.compile_seconds for r in case_rows)
        first = [r for r in case_rows if r.rank == 1]
        top1.append(base + (first[0].sim_seconds if policy == "tileloom" and first else 0.0))
        top5.append(base + sum(r.sim_seconds for r in case_rows))
    return (sum(top1) / len(top1), sum(top5) / len(top5))


def _brief(r: ResultRow) -> str:
    return (
        f"{r.cycles:,.0f} cyc on {r.cores} cores [{r.block_sizes}] busy compute "
        f"{100 * r.compute_busy_max:.0f}% reader {100 * r.reader_busy_max:.0f}% writer "
        f"{100 * r.writer_busy_max:.0f}%, DRAM read {r.dram_read_bytes / 2**20:.1f} MiB, "
        f"mcast {r.noc_multicast_bytes / 2**20:.1f} MiB, busiest link {100 * r.busiest_link:.0f}%, "
        f"{100 * r.roofline_fraction:.0f}% of its {r.roofline_bound}-bound roofline"
    )


def losses(rows: Iterable[ResultRow]) -> str:
    """Every case where Loom's pick is slower than the strongest TTNN policy, with both
    sides' simulated per-core breakdown (busiest core per engine, bytes moved), to say
    why."""
    picked = pick(rows)
    lines = ["Cases where Loom's pick is slower than TTNN (simulated per-core breakdown)", ""]
    for (kernel, arch, shape), pol in sorted(picked.items()):
        if "loom" not in pol or STRONGEST not in pol:
            continue
        loom, base = pol["loom"], pol[STRONGEST]
        if loom.cycles <= base.cycles:
            continue
        lines.append(f"{kernel} {arch} {shape}: {base.cycles / loom.cycles:.3f}x")
        lines.append(f"    loom {loom.candidate}: {_brief(loom)}")
        lines.append(f"    {base.policy} {base.candidate}: {_brief(base)}")
    if len(lines) == 2:
        lines.append("none")
    return "\n".join(lines) + "\n"
