"""CP-SAT with its default parameters versus Loom's SMALL_MODEL_PARAMETERS, on the very
problems a compile solves: CPU seconds per solve and whether both prove the same
optimum with the same assignment.

For each (kernel, shape) the compile's candidates are built in the solver's order
(cheapest lower bound first) and the first `--problems` distinct ones are solved without
a cutoff, once per parameter set, in this process (one worker, fixed seed). CPU time
(process time) is reported besides wall time: it is less sensitive to other load on the
machine. The tuned set must agree on every status, objective and assignment.

    PYTHONPATH=src .venv/bin/python benchmarks/solver_params.py [--problems 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from loom.arch import load_arch
from loom.kernels.registry import resolve_kernel
from loom.model.inputs import ProblemCache
from loom.pipeline import CompileOptions, compile_kernel
from loom.solve.cpsat import SMALL_MODEL_PARAMETERS, build_model, new_solver
from loom.solve.rank import problem_key

CASES = (
    ("gemm", {"M": 4096, "N": 4096, "K": 4096}),
    ("gemm", {"M": 2048, "N": 256, "K": 16384}),
    ("flash_attention", {"B": 1, "H": 8, "S": 2048, "D": 64}),
)


def _solve(problems, tuned: bool):  # type: ignore[no-untyped-def]
    cpu, wall, answers = [], [], []
    for problem in problems:
        built = build_model(problem)
        solver = new_solver(tuned=tuned)
        c0, w0 = time.process_time(), time.perf_counter()
        status = solver.Solve(built.model)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        values = {n: solver.Value(built.encoder.value[n].var) for n in problem.domains}
        answers.append((solver.StatusName(status), solver.Value(built.objective.var), values))
    return cpu, wall, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=40)
    parser.add_argument("--arch", default="wormhole_n150")
    args = parser.parse_args()
    arch = load_arch(args.arch)
    print(f"tuned parameters: {SMALL_MODEL_PARAMETERS}")
    print(f"{'case':<46} {'n':>3} {'default cpu ms':>15} {'tuned cpu ms':>13} "
          f"{'ratio':>6}  same optima")  # fmt: skip
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
        default_cpu, _, default = _solve(problems, tuned=False)
        tuned_cpu, _, tuned = _solve(problems, tuned=True)
        label = f"{kernel} {','.join(f'{k}={v}' for k, v in shape.items())}"
        d, t = statistics.median(default_cpu), statistics.median(tuned_cpu)
        print(f"{label:<46} {len(problems):>3} {1e3 * d:>15.1f} {1e3 * t:>13.1f} "
              f"{d / t:>5.2f}x  {'yes' if default == tuned else 'NO'}")  # fmt: skip


if __name__ == "__main__":
    main()
