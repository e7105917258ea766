"""Where `loom eval`'s time goes: seconds per policy on one representative case per kernel
and architecture, extrapolated to the full case list (`loom.eval.cases.paper_cases`).

Each case runs as `loom eval --jobs 1` runs it (`loom.eval.run.run_case`, one process, a
fresh cache folder so nothing is read back), and the rows' own timing columns are summed
per policy: `compile_seconds` (Loom's compile; TileLoom's ranking) and `sim_seconds`
(lowering and simulation; a tuned baseline's whole search). What the rows do not carry
(the frontend runs of the baselines' own formats, building buffers) is printed as
`other`, with the case's wall and CPU seconds. A tuned baseline's line gives its
candidates offered, built and simulated.

Extrapolation (an estimate, stated), in CPU seconds (the rows' wall split between compile
and simulation applied to the case's CPU seconds): a case's compile seconds are taken as the
representative's of its kernel and architecture, and its simulation seconds scale with a
proxy of the simulated work relative to the representative: flash attention with the
chunk steps, tokens^2 / B (so `--fa-scale 8` is scaled by 64 to the paper's tokens);
decode with B*S; GEMM with M*N*K (block steps at similar blocks: rough at the extremes);
the layer ops with M*N.

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/eval_time.py \\
        [--kernels gemm,flash_decode] [--archs wormhole_n150] [--fa-scale 8]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict

os.environ.setdefault("OMP_NUM_THREADS", "1")

import loom.eval.run
from loom.eval.cases import (
    ARCHS,
    BH,
    KERNELS,
    LAYER_KERNELS,
    PAPER_FA_TOKENS,
    EvalCase,
    case,
    paper_cases,
)
from loom.eval.run import EvalOptions, run_case
from loom.eval.tuned import Tuned, fastest

SEARCHES: list[tuple[int, int, int]] = []
"""(offered, built, simulated) of each tuned search of the case being measured."""


def _counted(candidates, prepare, simulate) -> Tuned:  # type: ignore[no-untyped-def]
    best = fastest(candidates, prepare, simulate)
    SEARCHES.append((len(candidates), best.built, best.simulated))
    return best


loom.eval.run.fastest = _counted  # the search's counts, for the report only

REPRESENTATIVE = {
    "gemm": {"M": 2048, "N": 2048, "K": 2048},
    "flash_decode": {"B": 8, "H": 32, "S": 2048, "D": 64},
    **{k: {"M": 1024, "N": 4096} for k in LAYER_KERNELS},
}
"""The representative shape per kernel (flash attention: B=1, D=64 at 1/--fa-scale of the
paper's tokens; decode's B is Blackhole's 10 there)."""


def representative(kernel: str, arch: str, fa_scale: int) -> EvalCase:
    if kernel.startswith("flash_attention"):
        tokens = PAPER_FA_TOKENS[arch] // fa_scale
        return case(kernel, arch, {"B": 1, "H": 8, "S": tokens, "D": 64})
    shape = dict(REPRESENTATIVE[kernel])
    if kernel == "flash_decode" and arch == BH:
        shape["B"] = 10
    return case(kernel, arch, shape)


def parse(text: str) -> list[tuple[str, int]]:
    return [(k, int(v)) for k, v in (kv.split("=") for kv in text.split(","))]


def work(c: EvalCase) -> float:
    """The proxy of simulated work the extrapolation scales by (module docstring)."""
    s = c.shape_dict
    if c.kernel.startswith("flash_attention"):
        return float((s["B"] * s["S"]) ** 2 / s["B"])
    if c.kernel == "flash_decode":
        return float(s["B"] * s["S"])
    if c.kernel == "gemm":
        return float(s["M"] * s["N"] * s["K"])
    return float(s["M"] * s["N"])


def _cpu() -> float:
    """CPU seconds of this process and of its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measure(c: EvalCase, options: EvalOptions) -> tuple[dict[str, list[float]], float, float]:
    """policy -> [compile s, sim s, rows] (wall, as the rows time them), and the case's
    wall and CPU seconds (the machine may be shared: CPU seconds are what it costs)."""
    SEARCHES.clear()
    start, cpu = time.perf_counter(), _cpu()
    rows = run_case(c, options)
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in rows:
        acc = out[row.policy]
        acc[0] += row.compile_seconds
        acc[1] += row.sim_seconds
        acc[2] += 1
        if not row.status.startswith("ok"):
            print(f"    {row.policy} {row.rank}: {row.status[:100]}")
    return dict(out), wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--fa-scale", type=int, default=8)
    ap.add_argument(
        "--shape", default="", help="this shape instead (one kernel), e.g. M=16384,N=256,K=2048"
    )
    args = ap.parse_args()
    kernels = tuple(k for k in args.kernels.split(",") if k)
    archs = tuple(a for a in args.archs.split(",") if a)
    full = paper_cases(kernels, archs, 1)
    total_now = 0.0
    total_full = 0.0
    with tempfile.TemporaryDirectory(prefix="loom-eval-time-") as cache:
        options = EvalOptions(cache_dir=cache)
        for arch in archs:
            for kernel in kernels:
                rep = representative(kernel, arch, args.fa_scale)
                if args.shape:
                    rep = case(kernel, arch, dict(parse(args.shape)))
                per_policy, wall, cpu = measure(rep, options)
                attributed = sum(v[0] + v[1] for v in per_policy.values())
                mine = [c for c in full if c.kernel == kernel and c.arch == arch]
                busy = cpu / wall  # the rows' wall seconds, as CPU seconds
                per_policy["other"] = [0.0, wall - attributed, 0.0]
                scale = sum(work(c) for c in mine) / work(rep)
                projected = busy * sum(
                    comp * len(mine) + sim * scale for comp, sim, _ in per_policy.values()
                )
                total_now += cpu
                total_full += projected
                print(f"{kernel} {arch} {rep.shape_text}: {wall:.1f} s wall, {cpu:.1f} s CPU; "
                      f"{len(mine)} cases projected {projected / 60:.1f} CPU-min "
                      f"(sim x{scale:.1f})")  # fmt: skip
                for policy, (comp, sim, n) in sorted(per_policy.items()):
                    print(f"    {policy:26s} rows {int(n):2d}  compile {comp:7.1f} s  "
                          f"sim {sim:7.1f} s")  # fmt: skip
                for offered, built, simulated in SEARCHES:
                    print(f"    tuned search: {offered} offered, {built} built, "
                          f"{simulated} simulated")  # fmt: skip
                sys.stdout.flush()
    print(f"measured {total_now / 60:.1f} CPU-min; full list projected "
          f"{total_full / 60:.1f} CPU-min, {total_full / 120:.1f} min wall on 2 cores")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
