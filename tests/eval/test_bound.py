"""The tuned searches' lower bound (`loom.eval.bound`): never above the simulated cycles,
equal to the busiest core's compute busy cycles, and the pruned search picks what the
exhaustive one picks."""

from __future__ import annotations

import pytest

from loom.baselines.build import build_schedule
from loom.dataflow import build_buffers
from loom.errors import ScheduleError
from loom.eval.bound import compute_bound
from loom.eval.cases import case
from loom.eval.run import EvalOptions, _Case, _tuned_baselines
from loom.flows.helion import run_frontend
from loom.sim import simulate

CASES = (
    ("gemm", "wormhole_n150", {"M": 512, "N": 256, "K": 1024}),
    ("gemm", "blackhole_p150_13x10", {"M": 256, "N": 256, "K": 512}),
    ("flash_attention", "wormhole_n150", {"B": 1, "H": 2, "S": 256, "D": 64}),
    ("flash_attention_causal", "blackhole_p150_13x10", {"B": 1, "H": 2, "S": 256, "D": 64}),
    ("flash_decode", "wormhole_n150", {"B": 1, "H": 2, "S": 512, "D": 64}),
    ("rms_norm", "wormhole_n150", {"M": 256, "N": 1024}),
)


@pytest.mark.parametrize(("kernel", "arch", "shape"), CASES)
def test_bound_is_the_compute_busy_time_and_never_above_the_simulation(
    kernel: str, arch: str, shape: dict[str, int]
) -> None:
    """Every candidate a tuned baseline offers: the bound is at most the simulated
    cycles and is the busiest compute engine's busy cycles plus the launch; the search
    (branch and bound) keeps the fastest of them all, the first offered on ties."""
    state = _Case(case(kernel, arch, shape), EvalOptions())
    program = run_frontend(state.spec, shape, state.log)
    strict = build_buffers(program)
    ((_, make),) = _tuned_baselines(state.case, state.arch)
    candidates = make()
    each = []
    for policy in candidates:
        own = state.program_for(policy, program)
        buffered = state.buffers_for(policy, own, strict)
        try:
            schedule = build_schedule(buffered, arch, shape, state.fidelity, policy)
            lowered = state.lower(own, buffered, schedule, policy)
        except ScheduleError:
            continue
        bound, sim = compute_bound(lowered, state.arch), simulate(lowered, state.arch)
        busy = {e.engine: e.max for e in sim.engine_busy}["compute"] * sim.kernel_cycles
        assert bound <= sim.cycles
        assert bound == pytest.approx(busy + sim.launch_cycles, rel=1e-6)
        each.append((sim.cycles, len(each), schedule.block_sizes))
    assert len(each) >= 2
    best = state.tune(program, strict, candidates)
    assert best.built == len(each) and best.simulated <= best.built
    cycles, _, blocks = min(each, key=lambda t: (t[0], t[1]))
    assert best.sim.cycles == cycles and best.schedule.block_sizes == blocks


def test_a_program_the_bound_cannot_read_gets_zero_and_is_simulated() -> None:
    """A Compute on an undeclared buffer: no bound (0), so the search simulates it and
    the simulator names the error."""
    import dataclasses

    from loom.eval.run import baseline_program
    from loom.ir.program import BlockRef, Compute

    c = case("gemm", "wormhole_n150", {"M": 256, "N": 256, "K": 256})
    program = baseline_program(c, "ttnn-matmul-oob")
    arch = _Case(c, EvalOptions()).arch
    assert compute_bound(program, arch) > 0
    broken = dataclasses.replace(program, compute=(Compute("nowhere", BlockRef("nowhere")),))
    assert compute_bound(broken, arch) == 0.0
