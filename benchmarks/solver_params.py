"""CP-SAT's default parameters, Loom's previous ones (no LP relaxation, no probing) and
SMALL_MODEL_PARAMETERS, on the very problems a compile solves: CPU milliseconds per solve
(median over the problems) and whether the tuned set proves the same optimum with the
same assignment as the previous one.

For each (kernel, shape) the compile's solved candidates come first, then the rest in
candidate order; the first `--problems` distinct ones are solved without a cutoff,
`--repeats` times per parameter set (the least CPU time kept: the least disturbed by
other load on the machine), in this process, one worker, fixed seed.

    PYTHONPATH=src .venv/bin/python benchmarks/solver_params.py [--problems 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from bench_util import shape_text
from loom.arch import load_arch
from loom.flows.helion import CompileOptions, compile_kernel
from loom.kernels.registry import resolve_kernel
from loom.model.inputs import ProblemCache
from loom.solve.cpsat import SMALL_MODEL_PARAMETERS, build_model, new_solver
from loom.solve.rank import problem_key

CASES = (
    ("gemm", {"M": 4096, "N": 4096, "K": 4096}),
    ("gemm", {"M": 2048, "N": 256, "K": 16384}),
    ("flash_attention", {"B": 1, "H": 8, "S": 2048, "D": 64}),
)


PREVIOUS = {"linearization_level": 0, "cp_model_probing_level": 0}
"""Loom's parameters before SMALL_MODEL_PARAMETERS."""


def _solve(problems, params: dict[str, object], repeats: int):  # type: ignore[no-untyped-def]
    """Per problem: the least CPU seconds of `repeats` solves (the least disturbed by other
    load), and the answer."""
    cpu, answers = [], []
    for problem in problems:
        built = build_model(problem)
        best = float("inf")
        for _ in range(repeats):
            solver = new_solver(tuned=False)
            for name, value in params.items():
                setattr(solver.parameters, name, value)
            start = time.process_time()
            status = solver.Solve(built.model)
            best = min(best, time.process_time() - start)
        cpu.append(best)
        values = {n: solver.Value(built.encoder.value[n].var) for n in problem.domains}
        answers.append((solver.StatusName(status), solver.Value(built.objective.var), values))
    return cpu, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3, help="solves per problem (min kept)")
    parser.add_argument("--arch", default="wormhole_n150")
    args = parser.parse_args()
    arch = load_arch(args.arch)
    print(f"tuned parameters: {SMALL_MODEL_PARAMETERS}")
    print(f"{'case':<40} {'n':>3} {'CPU ms per solve: default':>26} {'previous':>9} "
          f"{'tuned':>6}  same optimum / same assignment as previous")  # fmt: skip
    for kernel, shape in CASES:
        spec = resolve_kernel(kernel)
        result = compile_kernel(spec, CompileOptions(arch=arch, shape=shape, jobs=1))
        fidelity = arch.matmul.default_fidelity
        flops = spec.flops(shape) if spec.flops else 0
        cache = ProblemCache(result.buffered, arch, fidelity, flops)
        seen, problems = set(), []
        solved = [s.candidate for s in result.ranking.solutions if s.status != "pruned"]
        by_name = {c.name: c for c in result.candidates.candidates}
        for name in solved + [c.name for c in result.candidates.candidates]:
            problem = cache.build(by_name[name])
            key = problem_key(problem)
            if key in seen or problem.infeasible_reason:
                continue
            seen.add(key)
            problems.append(problem)
            if len(problems) == args.problems:
                break
        params = ({}, PREVIOUS, SMALL_MODEL_PARAMETERS)
        runs = [_solve(problems, p, args.repeats) for p in params]
        label = f"{kernel} {shape_text(shape)}"
        ms = [1e3 * statistics.median(cpu) for cpu, _ in runs]
        before, after = runs[1][1], runs[2][1]
        optimum = sum(a[:2] == b[:2] for a, b in zip(before, after, strict=True))
        assignment = sum(a == b for a, b in zip(before, after, strict=True))
        print(f"{label:<40} {len(problems):>3} {ms[0]:>26.1f} {ms[1]:>9.1f} {ms[2]:>6.1f}  "
              f"{optimum}/{len(problems)} / {assignment}/{len(problems)}")  # fmt: skip
        for a, b in zip(before, after, strict=True):
            if a != b:
                print(f"    previous {a}\n    tuned    {b}")


if __name__ == "__main__":
    main()
