"""Accuracy of the CUDA path on tt-lang-sim against an FP64 reference, next to the seed's.

Each workload runs launch by launch on tt-lang-sim (arrays stored in the precision
between launches; inside a launch tt-lang-sim computes in fp32, or for the "bf16
compute" rows in native bf16 arithmetic) and the relative
Frobenius error against FP64 is measured where the seed measured it: gaussian's
off-diagonal, jacobi_2d's interior after T steps, all of syrk's C.

    PYTHONPATH=src .venv/bin/python benchmarks/cuda_accuracy.py [--steps 1000]
"""

from __future__ import annotations

import argparse
import os

from loom.arch import load_arch
from loom.flows.cuda import SEED_ACCURACY, CudaOptions, compile_cuda, verify_cuda

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100, help="jacobi time steps (seed: 1000)")
    p.add_argument("--n", type=int, default=64, help="array size N")
    p.add_argument("--only", help="one workload")
    args = p.parse_args()
    arch = load_arch("blackhole_p150_13x10")
    cases = {
        "gaussian": {"N": str(args.n)},
        "jacobi_2d": {"N": str(args.n), "TSTEPS": str(args.steps)},
        "syrk": {"N": str(args.n), "M": str(args.n)},
    }
    print(f"N={args.n}, jacobi steps={args.steps}, on tt-lang-sim ({arch.name})\n")
    print(
        "| workload | region | precision | launches | rel. Frobenius vs FP64 | seed | "
        "deviation from emulated |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, defines in cases.items():
        if args.only and name != args.only:
            continue
        for prec, native in (("fp32", False), ("bf16", False), ("bf16", True)):
            c = compile_cuda(
                f"examples/cuda/{name}.cu", CudaOptions(arch, prec, tuple(defines.items()))
            )
            r = verify_cuda(c, native=native)
            label = f"{prec} ({'bf16' if native else 'fp32'} compute)"
            seed = SEED_ACCURACY.get((name, prec))
            print(
                f"| {name} | {r.region} | {label} | {r.launches} | {r.rel_frobenius:.2e} | "
                f"{f'{seed:.2g}' if seed else 'n/a'} | {r.max_rel_error_emulated:.1e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
