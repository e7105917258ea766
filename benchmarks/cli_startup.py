"""Whole-process time of `loom compile`: cold (tracing with Helion, then solving), warm
with the traced Tile IR cached but solving again ("warm, solve"), and warm with the
compile result cached too ("warm"), and which imports dominate the warm path.

Each run is a fresh `python -m loom.cli compile KERNEL --shape ... --quiet` process;
cold runs use an empty cache folder each time, warm runs one folder filled beforehand
("warm, solve" deletes the folder's compile-result entries before each run, so only
the trace is reused). Prints the median wall time and the median CPU time (user +
system of the child: less sensitive to other load on the machine), then the largest
imports of one warm run (`python -X importtime`) and whether Helion, torch or OR-Tools
were imported at all.

    PYTHONPATH=src .venv/bin/python benchmarks/cli_startup.py [--cold 3] [--warm 5]
        [--shape M=4096,N=4096,K=4096]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stderr) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stderr


def _top_imports(stderr: str, count: int) -> list[tuple[int, str]]:
    """Largest cumulative import times (microseconds) among top-level-ish modules."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip())) // 2
        if depth <= 2:
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default="gemm")
    parser.add_argument("--shape", default="M=4096,N=4096,K=4096")
    parser.add_argument("--arch", default="wormhole_n150")
    parser.add_argument("--cold", type=int, default=3)
    parser.add_argument("--warm", type=int, default=5)
    args = parser.parse_args()

    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable, "-m", "loom.cli", "compile", args.kernel,
        "--arch", args.arch, "--shape", args.shape, "--quiet",
    ]  # fmt: skip
    print(f"command: {' '.join(command[1:])}  (cpu cores: {os.cpu_count()})")

    cold: list[tuple[float, float]] = []
    for _ in range(args.cold):
        with tempfile.TemporaryDirectory() as folder:
            wall, cpu, _ = _run(command, {**env, "LOOM_CACHE_DIR": folder})
            cold.append((wall, cpu))
    with tempfile.TemporaryDirectory() as folder:
        warm_env = {**env, "LOOM_CACHE_DIR": folder}
        _run(command, warm_env)  # fill the cache
        solve = []
        for _ in range(args.warm):
            for entry in Path(folder).glob("compile-*.pickle"):
                entry.unlink()
            solve.append(_run(command, warm_env)[:2])
        warm = [_run(command, warm_env)[:2] for _ in range(args.warm)]
        _, _, imports = _run([sys.executable, "-X", "importtime", *command[1:]], warm_env)

    for label, runs in (("cold", cold), ("warm, solve", solve), ("warm", warm)):
        walls = [w for w, _ in runs]
        cpus = [c for _, c in runs]
        print(
            f"{label}: median wall {statistics.median(walls):.2f} s "
            f"(min {min(walls):.2f}, max {max(walls):.2f}), median CPU "
            f"{statistics.median(cpus):.2f} s, {len(runs)} runs"
        )
    ratio = statistics.median(w for w, _ in cold) / statistics.median(w for w, _ in warm)
    print(f"cold / warm wall = {ratio:.1f}x")
    names = {line.split("|")[-1].strip() for line in imports.splitlines() if "|" in line}
    heavy = [
        m for m in ("helion", "torch", "ortools", "pandas", "matplotlib", "jinja2", "rich")
        if m in names
    ]  # fmt: skip
    print(f"warm run imports of helion/torch/ortools/pandas/matplotlib/jinja2/rich: "
          f"{heavy or 'none'}")  # fmt: skip
    print("largest imports of one warm run (cumulative):")
    for micros, name in _top_imports(imports, 8):
        print(f"  {micros / 1e6:6.2f} s  {name}")


if __name__ == "__main__":
    main()
