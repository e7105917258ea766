"""Materialize the winning solution into a Schedule (every value named by its symbol)."""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.ir.buffers import ACC_KNOB, PLACEMENTS
from loom.ir.problem import Problem, pipes
from loom.ir.schedule import Copy, Schedule, TopEntry
from loom.ir.solution import Solution
from loom.solve.explain import binding_constraints, bottleneck, neighbourhood


@dataclass(frozen=True)
class CompileStats:
    kernel: str
    arch: str
    shape: dict[str, int]
    dtype: str
    math_fidelity: str
    candidates_total: int
    candidates_after_pruning: int
    candidates_feasible: int
    compile_seconds: float


def pipeline_knobs(problem: Problem, env: dict[str, int]) -> dict[str, dict[str, int]]:
    return {
        p.scope.key: {"b_load": env.get(p.b_load.name, 0), "b_store": env.get(p.b_store.name, 0)}
        for p in pipes(problem.heg)
    }


def accumulator_placements(problem: Problem, env: dict[str, int]) -> dict[str, str]:
    """Each matmul accumulator's placement under `env` (its knob indexes PLACEMENTS)."""
    return {
        name.removeprefix(ACC_KNOB): PLACEMENTS[env.get(name, 0)]
        for name in problem.knob_names
        if name.startswith(ACC_KNOB)
    }


def materialize(
    problem: Problem,
    solution: Solution,
    top: tuple[tuple[Solution, Problem], ...],
    stats: CompileStats,
    arch: Arch,
    explain: bool = True,
) -> Schedule:
    """The schedule of `solution`. `explain=False` leaves out the explanation (bottleneck,
    binding constraints, neighbourhood): a schedule that is only lowered and simulated
    (refining, the selection judge) does not read it, and the neighbourhood evaluates the
    objective at up to 3^tiles assignments."""
    env = solution.assignment
    cand = problem.candidate
    us = arch.cycles_to_us(solution.cycles)
    tflops = problem.flops / (us * 1e-6) / 1e12 if us else 0.0
    copies = tuple(
        Copy(c.op, c.tensor, c.kind, c.mode, c.area, c.region, c.levels, c.engine)
        for c in cand.copies
    )
    return Schedule(
        kernel=stats.kernel,
        arch=stats.arch,
        shape=stats.shape,
        dtype=stats.dtype,
        math_fidelity=stats.math_fidelity,
        candidate=cand.name,
        mapping=cand.mapping,
        copies=copies,
        block_sizes={n: env[n] for n in problem.tile_names},
        pipeline=pipeline_knobs(problem, env),
        accumulators=accumulator_placements(problem, env),
        l1_bytes=solution.l1_bytes,
        l1_capacity_bytes=arch.l1_usable_bytes,
        modeled_cycles=solution.cycles,
        modeled_us=round(us, 3),
        modeled_tflops=round(tflops, 3),
        modeled_dram_bytes=solution.dram_bytes,
        modeled_dram_gbps=round(arch.gbps(solution.dram_bytes, solution.cycles), 3),
        bottleneck=bottleneck(problem, env).as_dict() if explain else {},
        binding_constraints=tuple(binding_constraints(problem, env)) if explain else (),
        top_k=tuple(
            TopEntry(
                candidate=s.candidate,
                block_sizes={n: s.assignment[n] for n in p.tile_names},
                pipeline=pipeline_knobs(p, s.assignment),
                modeled_cycles=s.cycles,
            )
            for s, p in top
        ),
        neighbourhood=neighbourhood(problem, env) if explain else {},
        candidates_total=stats.candidates_total,
        candidates_after_pruning=stats.candidates_after_pruning,
        candidates_feasible=stats.candidates_feasible,
        compile_seconds=round(stats.compile_seconds, 3),
        waves={a: int(w.eval(env)) for a, w in cand.waves.items()},
        notes=(f"solver status: {solution.status}",),
    )
