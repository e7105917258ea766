"""How fast loom.sim simulates the paper's workloads, optionally side by side with another
source tree (the simulator before a change), checking that both give the same bits.

Workloads: flash attention as `loom eval --fa-scale 8` runs it (TTNN's SDPA, 1/8 of the
paper's tokens: B=1, H=8, S=2048, D=64 on Wormhole; 340,225 events, 31,654 rate solves), flash
decode (TTNN's decode SDPA, B=8, H=32, S=1024, D=64), the GEMM Loom picks at 2048^3 and
a hand-built 4096^3 GEMM in TTNN's configuration (tests/sim/sim_programs.py). Each is
lowered once, here; every timing runs in a fresh process (`--child`) that loads the
pickled Program, simulates a tiny program first (so the compiled kernels are loaded, not
timed) and then times `simulate` in CPU seconds. With `--baseline SRC` the runs of the
two trees alternate (same load for both) and the table gives each one's median, the
ratio, and whether the two results are identical in every field (wall time aside).

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sim_speed.py \\
        [--baseline ../main/src] [--reps 3] [--quick]

`--quick` leaves out the flash attention case (about 0.6 s of CPU per run, 1.2 s before
the generated streams and one-call network steps; loaded machine, 2 cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WH = "wormhole_n150"


def _programs(quick: bool) -> dict[str, tuple[str, object]]:
    """name -> (arch, lowered Program)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT / "tests" / "sim"))
    from sim_programs import GemmConfig, gemm_program

    from sim_solve import lowered

    out: dict[str, tuple[str, object]] = {}
    if not quick:
        fa = {"B": 1, "H": 8, "S": 2048, "D": 64}
        out["flash_attention 1/8 tokens ttnn-sdpa"] = (
            WH,
            lowered("flash_attention", WH, fa, "ttnn-sdpa"),
        )
    fd = {"B": 8, "H": 32, "S": 1024, "D": 64}
    out["flash_decode B=8 S=1024 ttnn-sdpa-decode"] = (
        WH,
        lowered("flash_decode", WH, fd, "ttnn-sdpa-decode"),
    )
    out["gemm 2048^3 loom pick"] = (WH, _loom_gemm(2048))
    n = 4096
    cfg = GemmConfig(
        n, n, n, (8, 8), 8, 8, 16, waves_m=2, waves_n=2, a_on_writer=True, split_store=True
    )
    out["gemm 4096^3 hand-built ttnn config"] = (WH, gemm_program(cfg))
    return out


def _loom_gemm(n: int) -> object:
    """The program of Loom's top-ranked schedule for an n^3 GEMM on Wormhole."""
    from loom.eval.cases import case
    from loom.eval.run import EvalOptions, _Case
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.flows.lowered import lower_schedule

    c = case("gemm", WH, {"M": n, "N": n, "K": n})
    state = _Case(c, EvalOptions())
    options = CompileOptions(
        arch=state.arch, shape=c.shape_dict, math_fidelity=state.fidelity, jobs=1, top_k=1
    )
    result = compile_kernel(state.spec, options)
    return lower_schedule(
        result.program, result.buffered, result.schedule, state.arch, state.log
    ).lowered


def child(path: str, name: str) -> None:
    """Time one simulation of the pickled workload `name`; print one JSON line."""
    from loom.arch import load_arch
    from loom.sim import simulate

    with open(path, "rb") as f:
        programs = pickle.load(f)
    warm = programs.pop("_warm")
    simulate(warm[1], load_arch(warm[0]))
    arch, program = programs[name]
    start = time.process_time()
    r = simulate(program, load_arch(arch))
    cpu = time.process_time() - start
    text = repr(dataclasses.replace(r, wall_seconds=0.0))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    print(json.dumps({"cpu": cpu, "digest": digest, "events": r.events, "solves": r.rate_solves}))


def _run(src: str, path: str, name: str) -> dict[str, float | str]:
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    cmd = [sys.executable, __file__, "--child", path, name]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"the timing run failed under {src}:\n{out.stderr.strip()}")
    result: dict[str, float | str] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="another tree's src directory to compare with")
    parser.add_argument("--reps", type=int, default=3, help="runs per tree and workload")
    parser.add_argument("--quick", action="store_true", help="leave out flash attention")
    parser.add_argument("--child", nargs=2, metavar=("PICKLE", "NAME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    programs = _programs(args.quick)
    sys.path.insert(0, str(ROOT / "tests" / "sim"))
    from sim_programs import pipe_program

    programs["_warm"] = (WH, pipe_program((1, 2), blocks=1, block_tiles=1, cols=2))
    trees = [("this", str(ROOT / "src"))]
    if args.baseline:
        trees.insert(0, ("baseline", str(Path(args.baseline).resolve())))
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "programs.pkl")
        with open(path, "wb") as f:
            pickle.dump(programs, f)
        head = " ".join(f"{t + ' cpu s':>14s}" for t, _ in trees)
        print(f"{'workload':42s} {head} {'ratio':>6s}  same bits  events  rate solves")
        for name in programs:
            if name == "_warm":
                continue
            runs: dict[str, list[dict[str, float | str]]] = {t: [] for t, _ in trees}
            for _ in range(args.reps):  # alternate the trees, so both see the same load
                for tree, src in trees:
                    runs[tree].append(_run(src, path, name))
            med = {t: statistics.median(float(r["cpu"]) for r in rs) for t, rs in runs.items()}
            digests = {str(r["digest"]) for rs in runs.values() for r in rs}
            ratio = med["baseline"] / med["this"] if args.baseline else 1.0
            last = runs["this"][-1]
            cols = " ".join(f"{med[t]:14.2f}" for t, _ in trees)
            print(
                f"{name:42s} {cols} {ratio:5.2f}x  {len(digests) == 1!s:9s} "
                f"{int(last['events']):>7,} {int(last['solves']):>7,}",
                flush=True,
            )


if __name__ == "__main__":
    main()
