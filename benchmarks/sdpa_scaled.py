"""The error of `loom.eval.scaled` (TTNN's default-config attention at the paper's tokens,
fitted from full simulations at S/4, S/8 and S/16) against full simulations at lengths
where those are affordable.

For each kernel, architecture and length S given, `ttnn-sdpa` is simulated in full at S
and at S/4, S/8, S/16 (as `loom eval` builds it: `loom.eval.run.baseline_program`), and
the quadratic through the three reduced totals is evaluated at S; the table gives both
and the relative error, with the CPU seconds of the full run and of the three reduced.

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sdpa_scaled.py \\
        [--kernels flash_attention,flash_attention_causal] [--archs wormhole_n150] \\
        [--lengths 4096,8192] [--batch 1] [--head-dim 64]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from loom.arch import load_arch
from loom.eval.cases import FA_HEADS, case
from loom.eval.run import baseline_program
from loom.eval.scaled import DIVISORS, quadratic_at
from loom.sim import simulate


def cycles(kernel: str, arch: str, shape: dict[str, int]) -> tuple[float, float]:
    """Simulated cycles of `ttnn-sdpa` and the CPU seconds (lowering and simulation)."""
    start = time.process_time()
    program = baseline_program(case(kernel, arch, shape), "ttnn-sdpa")
    sim = simulate(program, load_arch(arch))
    return sim.cycles, time.process_time() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default="flash_attention,flash_attention_causal")
    ap.add_argument("--archs", default="wormhole_n150,blackhole_p150_13x10")
    ap.add_argument("--lengths", default="4096,8192", help="full lengths S (S/16 whole tiles)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--head-dim", type=int, default=64)
    args = ap.parse_args()
    print(f"{'kernel':24} {'arch':22} {'S':>6} {'fitted':>12} {'simulated':>12} {'error':>8} "
          f"{'cpu full':>9} {'cpu fit':>8}")  # fmt: skip
    for kernel in args.kernels.split(","):
        for arch in args.archs.split(","):
            for text in args.lengths.split(","):
                s = int(text)
                shape = {"B": args.batch, "H": FA_HEADS, "D": args.head_dim}
                lengths = tuple(s // d for d in DIVISORS)
                runs = [cycles(kernel, arch, {**shape, "S": n}) for n in lengths]
                fitted = quadratic_at(tuple(map(float, lengths)), tuple(r[0] for r in runs), s)
                full, cpu = cycles(kernel, arch, {**shape, "S": s})
                print(f"{kernel:24} {arch:22} {s:6d} {fitted:12.0f} {full:12.0f} "
                      f"{100 * (fitted / full - 1):+7.2f}% {cpu:8.1f}s "
                      f"{sum(r[1] for r in runs):7.1f}s", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
