"""Every kernel of examples/helion: verify error per output and DRAM bandwidth.

For each (file, kernel) at the file's default inputs: compile, verify on tt-lang-sim
against the file's reference (every output, each with its own tolerance), simulate.
Prints the worst relative error over the outputs, the modeled and simulated cycles and
the DRAM bandwidth of each (the model's DRAM bytes over the modeled cycles, the
simulator's over the simulated cycles, launch included), as a fraction of the arch's DRAM
peak: the figures `loom simulate` prints.

    PYTHONPATH=src .venv/bin/python benchmarks/helion_examples.py [--arch wormhole_n150]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from loom.arch import load_arch
from loom.flows.helion import CompileOptions, compile_kernel
from loom.flows.lowered import simulate_lowered, verify_lowered
from loom.kernels.examples import EXAMPLES_DIR, example_kernels
from loom.kernels.registry import resolve_kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="wormhole_n150")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    arch = load_arch(args.arch)
    peak = arch.dram_peak_gbps
    print(f"arch {arch.name}: DRAM peak {peak:.1f} GB/s")
    print(
        f"{'file':24} {'kernel':20} {'verify':6} {'worst rel err':>13} {'modeled':>9} "
        f"{'simulated':>9} {'model BW':>8} {'sim BW':>8}"
    )
    for file, kernel in example_kernels():
        spec = resolve_kernel(str(EXAMPLES_DIR / file), kernel)
        options = CompileOptions(arch=arch, shape=spec.default_shape, jobs=args.jobs)
        result = compile_kernel(spec, options)
        outcome = verify_lowered(spec, result.lowered, result.log)
        sim = simulate_lowered(result.lowered, arch, result.log)
        moved = sim.bytes_moved.dram_read + sim.bytes_moved.dram_write
        modeled = result.lowered.modeled_cycles(arch)  # every launch, barriers included
        modeled_gbps = arch.gbps(result.lowered.modeled_dram_bytes(), modeled)
        print(
            f"{file:24} {kernel:20} {'PASS' if outcome.passed else 'FAIL':6} "
            f"{outcome.max_rel_error:13.3e} {modeled:9,.0f} {sim.cycles:9,.0f} "
            f"{modeled_gbps / peak:8.1%} {arch.gbps(moved, sim.cycles) / peak:8.1%}"
        )


if __name__ == "__main__":
    main()
