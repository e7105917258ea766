"""Evaluation cases, rows and the runner: one small GEMM end to end in this process, the
same case as Ray tasks (2 workers) gives the same rows, results.csv round-trips; TileLoom's
profiler skips what does not build."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from loom.arch import load_arch
from loom.baselines.build import Policy, build_schedule
from loom.baselines.tileloom import tileloom_candidates
from loom.dataflow import build_buffers
from loom.errors import ScheduleError
from loom.eval.cases import case, paper_cases, quick_cases
from loom.eval.rows import TIMING_COLUMNS, ResultRow, read_rows, rows_to_csv
from loom.eval.run import EvalOptions, tileloom_rows
from loom.eval.runner import RunnerOptions, run_cases
from loom.flows.helion import run_frontend
from loom.flows.lowered import lower_schedule
from loom.flows.stages import StageLog
from loom.kernels.registry import resolve_kernel
from loom.report.eval_tables import table2, table3

SMALL = case("gemm", "wormhole_n150", {"M": 256, "N": 256, "K": 256})
OPTIONS = EvalOptions(top_k=2, neighbours=False, time_limit_s=2.0)


def test_paper_cases_are_the_papers_shapes() -> None:
    cases = paper_cases()
    gemm = [c for c in cases if c.kernel == "gemm"]
    assert len(gemm) == 36  # 18 shapes with N <= M, on two architectures
    assert all(c.shape_dict["N"] <= c.shape_dict["M"] for c in gemm)
    decode = [c for c in cases if c.kernel == "flash_decode"]
    assert len(decode) == 36
    assert {c.shape_dict["B"] for c in decode if c.arch == "blackhole_p150_13x10"} == {10, 20, 30}
    dense = [c.shape for c in cases if c.kernel == "flash_attention"]
    causal = [c.shape for c in cases if c.kernel == "flash_attention_causal"]
    assert dense == causal and len(dense) == 8  # causal and not, the same shapes
    assert len(cases) == len(set(cases))
    assert set(quick_cases()) < set(cases) | set(quick_cases())


def _timeless(rows: list[ResultRow]) -> list[ResultRow]:
    zero = dict.fromkeys(TIMING_COLUMNS, 0.0)
    return sorted((dataclasses.replace(r, **zero) for r in rows), key=lambda r: r.key)


@pytest.fixture(scope="module")
def local_rows() -> list[ResultRow]:
    got: list[ResultRow] = []
    run_cases([SMALL], OPTIONS, RunnerOptions(jobs=1), lambda c, rows: got.extend(rows))
    return got


def test_one_case_runs_loom_and_every_gemm_baseline(local_rows: list[ResultRow]) -> None:
    policies = {(r.policy, r.rank) for r in local_rows}
    assert {("loom", 1), ("loom", 2), ("ttnn-matmul-oob", 1), ("tileloom", 1)} <= policies
    assert all(r.status == "ok" and r.cycles > 0 for r in local_rows)
    oob = next(r for r in local_rows if r.policy == "ttnn-matmul-oob")
    assert oob.candidate.startswith("ttnn-matmul-oob__") and oob.cores == 64
    assert "loom / ttnn-matmul-oob" in table2(local_rows)
    # every row against the kernel's roofline: 256^3 bf16 moves 384 KiB, DRAM-bound on WH
    assert all(0 < r.roofline_fraction <= 1 and r.roofline_bound == "dram" for r in local_rows)
    assert [r.roofline_us for r in local_rows] == pytest.approx(
        [3 * 256 * 256 * 2 / 288 / 1e3] * len(local_rows)
    )
    loom = next(r for r in local_rows if r.policy == "loom" and r.rank == 1)
    assert f"{100 * loom.roofline_fraction:.1f}% dram (1)" in next(
        line for line in table2(local_rows).splitlines() if "% of roofline: loom" in line
    )
    assert "compile time" in table3(local_rows)


def test_results_csv_round_trips_and_is_sorted(local_rows: list[ResultRow], tmp_path: Path) -> None:
    text = rows_to_csv(list(reversed(local_rows)))
    assert text == rows_to_csv(local_rows)
    path = tmp_path / "results.csv"
    path.write_text(text)
    again = read_rows(path)
    assert rows_to_csv(again) == text
    assert read_rows(tmp_path / "absent.csv") == []


def test_results_csv_with_a_column_no_longer_written_still_loads(tmp_path: Path) -> None:
    """A results.csv from when rows carried a `method` column reads as its rows (the
    reader takes the columns it knows)."""
    row = ResultRow("flash_attention", "wormhole_n150", "B=1", "ttnn-sdpa", 1, "ok", cycles=5.0)
    header, line = rows_to_csv([row]).splitlines()
    cells = line.split(",")
    path = tmp_path / "results.csv"
    path.write_text(f"{header},method\n{','.join(cells)},scaled\n")
    assert read_rows(path) == [row]


def _ray_children() -> list[str]:
    """Live processes whose parent is this one and whose command line names Ray."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().split()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if int(stat[3]) == os.getpid() and "ray" in cmd and stat[2] != "Z":
            found.append(cmd)
    return found


def test_cases_are_guessed_longest_first_for_the_runner() -> None:
    """Paper-size causal attention is guessed longest, a layer op shortest; every
    case's guess is positive (the runner only orders by it)."""
    from loom.eval.cases import expected_seconds

    cases = paper_cases()
    longest = sorted(cases, key=expected_seconds, reverse=True)
    assert longest[0].kernel == "flash_attention_causal" and longest[0].shape_dict["B"] == 1
    assert longest[-1].kernel in ("rms_norm", "layer_norm", "softmax")
    assert all(expected_seconds(c) > 0 for c in cases)


def test_ray_runner_gives_the_same_rows_and_leaves_nothing_behind(
    local_rows: list[ResultRow],
) -> None:
    ray = pytest.importorskip("ray")
    got: list[ResultRow] = []
    run_cases([SMALL], OPTIONS, RunnerOptions(jobs=2), lambda c, rows: got.extend(rows))
    assert _timeless(got) == _timeless(local_rows)
    assert not ray.is_initialized()
    assert _ray_children() == []


def test_a_case_simulates_each_distinct_program_once() -> None:
    """Two policies that lower to the same program (notes aside) share one simulation;
    a different program gets its own."""
    from loom.baselines.build import build_schedule
    from loom.baselines.tileloom import tileloom_candidates
    from loom.baselines.ttnn_matmul import oob_policy, tuned_policy
    from loom.dataflow import build_buffers
    from loom.eval.run import _Case
    from loom.flows.helion import run_frontend

    state = _Case(case("gemm", "wormhole_n150", {"M": 512, "N": 512, "K": 512}), OPTIONS)
    program = run_frontend(state.spec, state.case.shape_dict, state.log)
    buffered = build_buffers(program, "output")  # TTNN's bf16 partial sums in the output
    shape, grid = state.case.shape_dict, (state.arch.grid_x, state.arch.grid_y)
    oob_p, tuned_p = oob_policy(shape, state.arch.name, grid), tuned_policy(shape, state.arch.name)
    assert oob_p is not None and tuned_p is not None
    oob = build_schedule(buffered, state.arch.name, shape, state.fidelity, oob_p)
    tuned = build_schedule(buffered, state.arch.name, shape, state.fidelity, tuned_p)
    assert set(oob.accumulators.values()) == set(tuned.accumulators.values()) == {"output"}
    assert oob.candidate != tuned.candidate and oob.block_sizes == tuned.block_sizes
    first, _ = state.simulate(program, buffered, oob)
    again, _ = state.simulate(program, buffered, tuned)
    assert again is first
    ranked = tileloom_candidates("gemm", state.arch, shape, state.fidelity, 5)
    others = [build_schedule(buffered, state.arch.name, shape, state.fidelity, c.policy)
              for c in ranked]  # fmt: skip
    other = next(o for o in others if o.block_sizes != oob.block_sizes)
    assert state.simulate(program, buffered, other)[0] is not first


def test_table3_without_gemm_says_so_instead_of_printing_nan(local_rows: list[ResultRow]) -> None:
    others = [dataclasses.replace(r, kernel="flash_decode") for r in local_rows]
    text = table3(others)
    assert "no GEMM case" in text and "nan" not in text


def test_flash_attention_runs_the_papers_tokens_unless_fa_scale_is_given() -> None:
    cases = paper_cases(("flash_attention", "flash_attention_causal"))
    tokens = {(c.arch, c.shape_dict["B"] * c.shape_dict["S"]) for c in cases}
    assert tokens == {("wormhole_n150", 16384), ("blackhole_p150_13x10", 15360)}
    eighth = paper_cases(("flash_attention",), fa_scale=8)
    assert {c.shape_dict["B"] * c.shape_dict["S"] for c in eighth} == {2048, 1920}


def test_tileloom_profiles_the_next_candidate_when_one_does_not_fit_l1() -> None:
    """Causal attention at D=256: TileLoom's roofline ranks 256x128 blocks first, which
    its own L1 estimate admits and the lowering rejects; the profiler skips such
    kernels as failing to build and simulates the first candidate that lowers as its
    rank 1 (256x32 since the score scale moved onto q, whose scaled copy takes L1)."""
    shape = {"B": 1, "H": 8, "S": 1024, "D": 256}
    arch = load_arch("wormhole_n150")
    candidates = tileloom_candidates("flash_attention_causal", arch, shape, "HiFi4", 4)
    program = run_frontend(resolve_kernel("flash_attention_causal"), shape, StageLog())
    buffered = build_buffers(program)

    def lowers(policy: Policy) -> bool:
        schedule = build_schedule(buffered, arch.name, shape, "HiFi4", policy)
        try:
            lower_schedule(program, buffered, schedule, arch, StageLog())
        except ScheduleError as err:
            assert "L1" in str(err)
            return False
        return True

    assert not lowers(candidates[0].policy)
    fitting = next(c for c in candidates[1:] if lowers(c.policy))
    rows = tileloom_rows(case("flash_attention_causal", arch.name, shape), EvalOptions(top_k=1))
    assert [(r.rank, r.status) for r in rows] == [(1, "ok")]
    assert (
        rows[0].block_sizes
        == " ".join(f"{k}={v}" for k, v in fitting.policy.block_sizes.items())
        == "tile_b=1 tile_m=256 tile_n=32"
    )


def test_layer_ops_are_cases_whose_table2_line_is_loom_over_ttnns_op() -> None:
    from loom.eval.cases import LAYER_KERNELS, kernel_source

    quick = quick_cases(kernels=LAYER_KERNELS)
    assert len(quick) == 2 * len(LAYER_KERNELS)
    assert {c.shape_text for c in quick} == {"M=1024,N=2048"}
    assert not {c.kernel for c in quick_cases()} & set(LAYER_KERNELS)
    # row ops at 4 shapes, eltwise ops at 3, on both architectures
    assert len(paper_cases(LAYER_KERNELS)) == 2 * (3 * 4 + 3 * 3)
    assert resolve_kernel(kernel_source("rms_norm")).shape_keys == ("M", "N")
    shape = "M=1024,N=2048"
    rows = [
        ResultRow("rms_norm", "wormhole_n150", shape, "loom", 1, "ok", cycles=100.0),
        ResultRow("rms_norm", "wormhole_n150", shape, "ttnn-rms-norm", 1, "ok", cycles=150.0),
    ]
    lines = [line for line in table2(rows).splitlines() if line.startswith("rms_norm")]
    assert any("loom / ttnn-strongest" in line and "1.500x (1)" in line for line in lines)
