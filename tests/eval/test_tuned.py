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
from loom.eval.tuned import Prepared, fastest


def _policy(m: int, n: int) -> Policy:
    return Policy("t", (), {"tile_b": 1, "tile_m": m, "tile_n": n})


@dataclasses.dataclass(frozen=True)
class _Schedule:
    notes: tuple[str, ...]
    key: tuple[int, int]


def _fake(
    cycles: dict[tuple[int, int], float], bounds: dict[tuple[int, int], float] | None = None
) -> tuple[Any, Any, list[tuple[int, int]]]:
    """`prepare` and `simulate` of a search over fixed cycles (and bounds: 0 unless
    given), and the list of candidates simulated, in order."""
    simulated: list[tuple[int, int]] = []

    def prepare(policy: Policy) -> Prepared[tuple[int, int]]:
        key = (policy.block_sizes["tile_m"], policy.block_sizes["tile_n"])
        if key not in cycles:
            raise ScheduleError("L1 buffers 2000000 bytes of 1398784")
        bound = (bounds or {}).get(key, 0.0)
        return Prepared(_Schedule(("own",), key), key, bound, 0.5)  # type: ignore[arg-type]

    def simulate(key: tuple[int, int]) -> tuple[Any, float]:
        simulated.append(key)
        return SimpleNamespace(cycles=cycles[key]), 1.0

    return prepare, simulate, simulated


def test_fastest_keeps_the_fewest_cycles_and_the_first_on_ties() -> None:
    candidates = (_policy(32, 32), _policy(64, 64), _policy(128, 64), _policy(64, 128))
    prepare, simulate, _ = _fake({(32, 32): 90.0, (64, 64): 50.0, (64, 128): 50.0})
    best = fastest(candidates, prepare, simulate)
    assert best.schedule.key == (64, 64) and best.sim.cycles == 50.0 and best.seconds == 4.5
    assert (best.simulated, best.built) == (3, 3)
    assert best.schedule.notes[0] == "own"
    assert "fastest of 3 simulated" in best.schedule.notes[1]
    assert "tile_m=128 tile_n=64 (L1 buffers" in best.schedule.notes[2]


def test_fastest_simulates_by_ascending_bound_and_skips_what_cannot_win() -> None:
    """Bounds 10, 40, 60, 50 under cycles 70, 45, 80, 50: (64, 64) first (45 cycles),
    then (32, 32) (bound 40 < 45: 70 cycles); (64, 128) and (128, 64), bounded at 50 and
    60 > 45, are never simulated. A bound equal to the best is simulated: a tie goes to
    the first offered, as in the exhaustive search."""
    candidates = (_policy(32, 32), _policy(64, 64), _policy(128, 64), _policy(64, 128))
    cycles = {(32, 32): 70.0, (64, 64): 45.0, (128, 64): 80.0, (64, 128): 50.0}
    bounds = {(32, 32): 40.0, (64, 64): 10.0, (128, 64): 60.0, (64, 128): 50.0}
    prepare, simulate, simulated = _fake(cycles, bounds)
    best = fastest(candidates, prepare, simulate)
    assert best.schedule.key == (64, 64) and simulated == [(64, 64), (32, 32)]
    assert (best.simulated, best.built) == (2, 4)
    assert "not simulated, bounded below" in best.schedule.notes[2]
    tie = {**cycles, (32, 32): 45.0}
    prepare, simulate, simulated = _fake(tie, {**bounds, (32, 32): 45.0})
    best = fastest(candidates, prepare, simulate)
    assert best.schedule.key == (32, 32) and simulated == [(64, 64), (32, 32)]


def test_fastest_refuses_when_no_candidate_builds() -> None:
    with pytest.raises(ScheduleError, match="no candidate builds"):
        fastest((_policy(512, 512),), *_fake({})[:2])
    with pytest.raises(ScheduleError, match="none offered"):
        fastest((), *_fake({})[:2])


def test_sdpa_tuned_is_the_fastest_of_its_candidates_simulated_one_by_one() -> None:
    """B=1, H=1, S=128, D=64 on Wormhole: 3 x 3 chunk pairs (32, 64, 128 divide 128), all
    within L1; the tuned row is the one with the fewest simulated cycles (each simulated
    as the evaluation simulates a baseline: as TTNN's kernel computes)."""
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
        each.append(state.simulate(program, buffered, schedule, policy)[0].cycles)
    assert best.sim.cycles == min(each) and best.built == 9
    assert any(note.startswith(f"fastest of {best.simulated} simulated")
               for note in best.schedule.notes)  # fmt: skip


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


def test_sdpa_decode_tuned_and_models_run_through_the_evaluation() -> None:
    """B=1, H=2, S=256, D=64 on Wormhole: the tuned search offers k_chunk 32 ... 256 for
    every cores-per-head count, keeps the fastest simulated; the models' program reads K
    and V as bfp8 (its KV cache), the tuned one keeps the kernel's bf16."""
    from loom.eval.run import baseline_program

    c = case("flash_decode", "wormhole_n150", {"B": 1, "H": 2, "S": 256, "D": 64})
    state = _Case(c, EvalOptions())
    ((name, make),) = _tuned_baselines(c, state.arch)
    assert name == "ttnn-sdpa-decode-tuned"
    candidates = make()
    assert {p.block_sizes["tile_n"] for p in candidates} == {32, 64, 128, 256}
    models = baseline_program(c, "ttnn-sdpa-decode-models")
    tuned = baseline_program(c, "ttnn-sdpa-decode-tuned")
    dtypes = {t.name: t.dtype for t in models.tensors}
    assert (dtypes["k"], dtypes["v"], dtypes["q"]) == ("bfp8", "bfp8", "bf16")
    assert {t.name: t.dtype for t in tuned.tensors}["k"] == "bf16"


def test_table2_leads_with_the_strongest_ttnn_and_keeps_the_default() -> None:
    from loom.eval.rows import ResultRow
    from loom.report.eval_tables import losses, table2

    def row(policy: str, cycles: float) -> ResultRow:
        return ResultRow("flash_decode", "wormhole_n150", "B=8,H=32,S=1024,D=64", policy, 1,
                         "ok", cycles=cycles)  # fmt: skip

    rows = [
        row("loom", 100.0),
        row("ttnn-sdpa-decode", 300.0),
        row("ttnn-sdpa-decode-models", 150.0),
        row("ttnn-sdpa-decode-tuned", 200.0),
    ]
    text = table2(rows)
    assert "loom / ttnn-strongest" in text and "1.500x (1)" in text
    assert "loom / ttnn-sdpa-decode (no config)" in text and "3.000x (1)" in text
    assert "loom / ttnn-sdpa-decode-tuned" in text and "2.000x (1)" in text
    assert "none" in losses(rows)
    assert "loom-kv-bfp8" not in text
    same = table2([*rows, row("loom-kv-bfp8", 75.0)])
    assert "loom-kv-bfp8 / ttnn-sdpa-decode-models" in same and "2.000x (1)" in same
    lost = losses([*rows[:2], row("ttnn-sdpa-decode-models", 90.0)])
    assert "0.900x" in lost and "    ttnn-sdpa-decode-models " in lost


def test_matmul_tuned_is_searched_for_every_gemm_shape() -> None:
    """M = N = K = 256 on Wormhole has no published config, yet the evaluation tunes it:
    in0_block_w 8, 4, 2, 1 over 1 x 1 out blocks; the row is the fastest simulated."""
    c = case("gemm", "wormhole_n150", {"M": 256, "N": 256, "K": 256})
    state = _Case(c, EvalOptions())
    ((name, make),) = _tuned_baselines(c, state.arch)
    assert name == "ttnn-matmul-tuned"
    candidates = make()
    assert [p.block_sizes["tile_k"] for p in candidates] == [256, 128, 64, 32]
    from loom.dataflow import build_buffers
    from loom.flows.helion import run_frontend

    program = run_frontend(state.spec, c.shape_dict, state.log)
    best = state.tune(program, build_buffers(program), candidates)
    assert best.built == 4 and f"fastest of {best.simulated} simulated" in str(best.schedule.notes)
    assert best.schedule.accumulators and set(best.schedule.accumulators.values()) == {"output"}


def test_decode_also_compiles_loom_with_the_models_bfp8_cache() -> None:
    """The models' decode reads a bfloat8_b KV cache; Loom compiled with the same formats
    is its own row, beside the bf16 compile."""
    from loom.eval.run import _same_format_rows

    c = case("flash_decode", "wormhole_n150", {"B": 1, "H": 2, "S": 256, "D": 64})
    (row,) = _same_format_rows(_Case(c, EvalOptions()))
    assert (row.policy, row.status, row.rank) == ("loom-kv-bfp8", "ok", 1)
    assert row.cycles > 0 and row.dram_read_bytes > 0
    gemm = case("gemm", "wormhole_n150", {"M": 256, "N": 256, "K": 256})
    assert _same_format_rows(_Case(gemm, EvalOptions())) == []
