"""The state probe: it leaves the simulation alone, and finds the repeats that are there."""

from __future__ import annotations

import dataclasses

from sim_programs import GemmConfig, dram_read_program, gemm_program, pipe_program

from loom.arch import load_arch
from loom.sim import simulate
from loom.sim.engine import Process, Scheduler
from loom.sim.periodicity import machine_state, measure_periodicity

WH = load_arch("wormhole_n150")


def _fingerprint(program: object, **kw: object) -> tuple[object, ...]:
    r = simulate(program, WH, **kw)  # type: ignore[arg-type]
    return (r.cycles, r.events, r.rate_solves, dataclasses.astuple(r.bytes_moved), r.core_busy)


def test_watching_changes_nothing() -> None:
    calls = []

    def watch(sched: Scheduler, procs: list[Process]) -> None:
        calls.append(machine_state(sched, procs, 0))

    for program in (
        gemm_program(GemmConfig(512, 512, 512, (4, 4), 4, 4, 4)),
        pipe_program((1, 8), blocks=6, block_tiles=4, cols=8),
    ):
        calls.clear()
        assert _fingerprint(program, watch=watch) == _fingerprint(program)
        assert calls  # the probe ran


def test_unicast_gemm_repeats_every_k_step() -> None:
    """Every core reads its own operands and the cores are alike: once the pipeline is
    full the machine is back in the same state after each K step."""
    cfg = GemmConfig(2048, 2048, 2048, (8, 8), 8, 8, 2, mcast=False)
    p = measure_periodicity(gemm_program(cfg), WH)
    k_steps = 2048 // 32 // cfg.bk
    assert p.first_repeat is not None and p.first_seen is not None
    assert p.repeats > k_steps // 2
    assert 0 < p.period_cycles < 1.2 * p.cycles / k_steps
    assert p.speedup_bound > 5


def test_no_repeat_without_a_loop_to_repeat() -> None:
    """One block per core: nothing can repeat, and nothing could be skipped."""
    p = measure_periodicity(dram_read_program((2, 2), blocks=1, block_rows=1, block_cols=2), WH)
    assert p.repeats == 0 and p.first_repeat is None
    assert p.speedup_bound == 1.0


def test_times_and_bytes_are_part_of_the_state() -> None:
    """The multicast GEMM reaches the same places in its programs before its times settle:
    some states repeat in their discrete part only."""
    p = measure_periodicity(gemm_program(GemmConfig(1024, 1024, 1024, (8, 8), 4, 4, 4)), WH)
    assert p.discrete_repeats > p.repeats
