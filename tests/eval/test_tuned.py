"""The tuned baselines' search: the fastest simulated candidate, rejected ones named."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from loom.baselines.build import Policy
from loom.errors import ScheduleError
from loom.eval.cases import case
from loom.eval.run import EvalOptions, _Case, _tuned_baselines
from loom.eval.tuned import fastest


def _policy(m: int, n: int) -> Policy:
    return Policy("t", (), {"tile_b": 1, "tile_m": m, "tile_n": n})


@dataclasses.dataclass(frozen=True)
class _Schedule:
    notes: tuple[str, ...]
    key: tuple[int, int]


def _fake_run(cycles: dict[tuple[int, int], float]) -> Any:
    def run(policy: Policy) -> tuple[Any, Any, float]:
        key = (policy.block_sizes["tile_m"], policy.block_sizes["tile_n"])
        if key not in cycles:
            raise ScheduleError("L1 buffers 2000000 bytes of 1398784")
        schedule = _Schedule(("own",), key)
        return schedule, SimpleNamespace(cycles=cycles[key]), 1.0

    return run


def test_fastest_keeps_the_fewest_cycles_and_the_first_on_ties() -> None:
    candidates = (_policy(32, 32), _policy(64, 64), _policy(128, 64), _policy(64, 128))
    best = fastest(candidates, _fake_run({(32, 32): 90.0, (64, 64): 50.0, (64, 128): 50.0}))
    assert best.schedule.key == (64, 64) and best.sim.cycles == 50.0 and best.seconds == 3.0
    assert best.schedule.notes[0] == "own"
    assert "fastest of 3 simulated" in best.schedule.notes[1]
    assert "tile_m=128 tile_n=64 (L1 buffers" in best.schedule.notes[2]


def test_fastest_refuses_when_no_candidate_builds() -> None:
    with pytest.raises(ScheduleError, match="no candidate builds"):
        fastest((_policy(512, 512),), _fake_run({}))
    with pytest.raises(ScheduleError, match="none offered"):
        fastest((), _fake_run({}))


def test_sdpa_tuned_is_the_fastest_of_its_candidates_simulated_one_by_one() -> None:
    """B=1, H=1, S=128, D=64 on Wormhole: 3 x 3 chunk pairs (32, 64, 128 divide 128), all
    within L1; the tuned row is the one with the fewest simulated cycles."""
    from loom.baselines.build import build_schedule
    from loom.dataflow import build_buffers
    from loom.flows.helion import run_frontend

    state = _Case(case("flash_attention", "wormhole_n150", {"B": 1, "H": 1, "S": 128, "D": 64}),
                  EvalOptions())  # fmt: skip
    program = run_frontend(state.spec, state.case.shape_dict, state.log)
    buffered = build_buffers(program)
    ((name, make),) = _tuned_baselines(state.case, state.arch)
    candidates = make()
    assert name == "ttnn-sdpa-tuned" and len(candidates) == 9
    best = state.tune(program, buffered, candidates)
    each = []
    for policy in candidates:
        schedule = build_schedule(buffered, "wormhole_n150", state.case.shape_dict,
                                  state.fidelity, policy)  # fmt: skip
        each.append(state.simulate(program, buffered, schedule)[0].cycles)
    assert best.sim.cycles == min(each)
    assert best.schedule.notes[-1].startswith("fastest of 9 simulated")


def test_table2_compares_loom_with_the_tuned_attention_baselines_when_present() -> None:
    from loom.eval.rows import ResultRow
    from loom.report.eval_tables import table2

    def row(policy: str, cycles: float) -> ResultRow:
        return ResultRow("flash_attention", "wormhole_n150", "B=1,H=8,S=2048,D=64", policy, 1,
                         "ok", cycles=cycles)  # fmt: skip

    plain = [row("loom", 100.0), row("ttnn-sdpa", 400.0)]
    assert "ttnn-sdpa-tuned" not in table2(plain)
    text = table2([*plain, row("ttnn-sdpa-models", 120.0), row("ttnn-sdpa-tuned", 110.0)])
    assert "loom / ttnn-sdpa-tuned" in text and "1.100x (1)" in text
    assert "ttnn-sdpa-models / ttnn-sdpa" in text and "3.333x (1)" in text
