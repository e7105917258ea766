"""Largest sizes the CUDA path accepts on blackhole_p150_13x10, and their simulated time.

The seed's scope is kernels whose per-core working set (each core's share of the arrays,
resident in L1) fits L1; Physical enforces it. This finds, per workload and precision,
the largest N (a multiple of 32) that passes, and simulates the default realization
(syrk: strip-mined, interchanged) at the sizes given (default: 256, 1024 and, for
jacobi_2d, the limit itself; `--full` simulates every workload at its limit, which takes
long on two cores; syrk's limit is then the largest N whose interchanged accumulator
blocks also fit, found by lowering). Host loops are timed on sampled steps (see docs/cuda.md).
`--fused` simulates gaussian with its factor fused into the update (`tileplan.fuse`),
whose launches are wider than the grid's 13 core columns from N=448 on (several column
passes per core, the factor column forwarded once per tile row); `--hoisted` adds the
pivot's reciprocal computed once per core (the pivot tile then is not read per tile).

    PYTHONPATH=src .venv/bin/python benchmarks/cuda_scaling.py [--full] [--fused [--hoisted]]
"""

from __future__ import annotations

import argparse
import os
import time

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.errors import InfeasibleError
from loom.flows.cuda import CudaOptions, compile_cuda, launches, simulate_cuda

os.environ.setdefault("OMP_NUM_THREADS", "1")
ARCH = load_arch("blackhole_p150_13x10")


def defines(name: str, n: int) -> tuple[tuple[str, str], ...]:
    extra = {"jacobi_2d": {"TSTEPS": "4"}, "syrk": {"M": str(n)}}.get(name, {})
    return (("N", str(n)), *extra.items())


FUSED = False
"""--fused: gaussian's factor fused into its update."""
HOISTED = False
"""--hoisted: with --fused, the pivot's reciprocal computed once per core."""


def annotations(name: str, n: int) -> dict:  # type: ignore[type-arg]
    """The realization simulated: the default, except syrk strip-mined and interchanged
    (and gaussian fused, with --fused)."""
    if name == "syrk":
        return {"tileplan": {"strip_mine": best_strip(n), "interchange": True}}
    if name == "gaussian" and FUSED:
        ann = {"tileplan": {"fuse": ["Fan1", "Fan2"]}}
        return ann | ({"tileflow": {"reciprocal": "hoisted"}} if HOISTED else {})
    return {}


def fits(name: str, n: int, prec: str) -> bool:
    try:
        compile_cuda(f"examples/cuda/{name}.cu", CudaOptions(ARCH, prec, defines(name, n)))
    except InfeasibleError:
        return False
    return True


def lowers(name: str, n: int, prec: str) -> bool:
    """The simulated realization's real L1 buffers fit too (checked at lowering)."""
    ann = parse_annotations(annotations(name, n), "bench")
    try:
        opts = CudaOptions(ARCH, prec, defines(name, n), ann)
        launches(compile_cuda(f"examples/cuda/{name}.cu", opts), 2)
    except InfeasibleError:
        return False
    return True


def simulated_limit(name: str, nmax: int, prec: str) -> int:
    """The largest N <= nmax whose simulated realization lowers. syrk's interchanged
    accumulator blocks depend on how the tile count factors over the grid, so this
    scans down from the working-set limit instead of bisecting (a fused gaussian is
    checked at the limit: its launches' buffers must fit too)."""
    if name == "gaussian" and FUSED:
        return next(n for n in range(nmax, 31, -32) if lowers(name, n, prec))
    if name != "syrk":
        return nmax
    return next(n for n in range(nmax, 31, -32) if lowers(name, n, prec))


def limit(name: str, prec: str) -> int:
    lo, hi = 32, 32 * 1024
    while hi - lo > 32:
        mid = (lo + hi) // 64 * 32
        lo, hi = (mid, hi) if fits(name, mid, prec) else (lo, mid)
    return lo


def best_strip(n: int) -> int:
    tiles = n // 32
    return max(d for d in range(1, 11) if tiles % d == 0)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--full", action="store_true")
    p.add_argument("--workloads", default="jacobi_2d,syrk,gaussian")
    p.add_argument("--sizes", default="256,1024", help="sizes below the limit")
    p.add_argument("--fused", action="store_true", help="gaussian with tileplan.fuse")
    p.add_argument(
        "--hoisted", action="store_true", help="with --fused: and tileflow.reciprocal=hoisted"
    )
    args = p.parse_args()
    global FUSED, HOISTED
    FUSED, HOISTED = args.fused, args.fused and args.hoisted
    print(
        "| workload | precision | largest N fitting L1 | N simulated | launches | "
        "simulated us | wall s |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in args.workloads.split(","):
        for prec in ("bf16", "fp32"):
            nmax = limit(name, prec)
            top = simulated_limit(name, nmax, prec) if args.full else nmax
            below = [int(s) for s in args.sizes.split(",") if s]
            sizes = below + ([top] if args.full or name == "jacobi_2d" else [])
            lim = str(nmax) if top == nmax else f"{nmax} ({top} interchanged)"
            for n in sizes:
                ann = annotations(name, n)
                t0 = time.perf_counter()
                opts = CudaOptions(ARCH, prec, defines(name, n), parse_annotations(ann, "bench"))
                try:
                    r = simulate_cuda(compile_cuda(f"examples/cuda/{name}.cu", opts), sample=3)
                except InfeasibleError as err:
                    print(f"| {name} | {prec} | {lim} | {n} | rejected: {err} | | |")
                    continue
                print(
                    f"| {name} | {prec} | {lim} | {n} | {r.launches} | {r.us:.1f} | "
                    f"{time.perf_counter() - t0:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
