"""The default-config attention scaled from shorter sequences (`loom.eval.scaled`): which
rows it applies to, the fit, the row's label, and its error against a full simulation."""

from __future__ import annotations

import dataclasses

import pytest

from loom.arch import load_arch
from loom.eval import scaled
from loom.eval.cases import case, paper_cases
from loom.eval.rows import ResultRow
from loom.eval.scaled import quadratic_at, scaled_lengths, scaled_row


def test_only_the_default_attention_at_the_papers_tokens_is_scaled() -> None:
    """Wormhole's non-causal paper cases (whole query chunks per core at S/4, S/8, S/16);
    not Blackhole's (1.875 chunks per core at S/16), not causal, not another policy."""
    cores = {"wormhole_n150": 64, "blackhole_p150_13x10": 130}
    for c in paper_cases():
        wanted = c.kernel == "flash_attention" and c.arch == "wormhole_n150"
        assert bool(scaled_lengths(c, "ttnn-sdpa", cores[c.arch])) == wanted
        assert scaled_lengths(c, "ttnn-sdpa-tuned", 64) == scaled_lengths(c, "loom", 64) == ()
    wh = case("flash_attention", "wormhole_n150", {"B": 1, "H": 8, "S": 16384, "D": 64})
    assert scaled_lengths(wh, "ttnn-sdpa", 64) == (4096, 2048, 1024)
    assert all(scaled_lengths(c, "ttnn-sdpa", 64) == () for c in paper_cases(fa_scale=8))


def test_the_quadratic_goes_through_its_points() -> None:
    def f(x: float) -> float:
        return 3.0 * x * x + 5.0 * x + 7.0

    assert quadratic_at((400.0, 200.0, 100.0), (f(400), f(200), f(100)), 1600.0) == (
        pytest.approx(f(1600))
    )


def test_a_scaled_row_says_so_and_fits_its_columns() -> None:
    base = ResultRow("flash_attention", "wormhole_n150", "B=1,H=8,S=1600,D=64", "ttnn-sdpa", 1,
                     "ok", cores=64)  # fmt: skip
    runs = tuple(
        dataclasses.replace(
            base,
            cycles=2.0 * n * n + 1000.0,
            dram_read_bytes=4.0 * n * n,
            tflops=1.0,
            utilization=0.5,
            compute_busy_max=0.9 - n / 1e4,
            sim_seconds=1.0,
        )
        for n in (400, 200, 100)
    )
    arch = load_arch("wormhole_n150")
    row = scaled_row(base, runs, (400, 200, 100), 1600, 1e12, arch, 1000.0, 100.0)
    assert row.cycles == pytest.approx(2.0 * 1600**2 + 1000.0)
    assert row.dram_read_bytes == pytest.approx(4.0 * 1600**2)
    assert row.compute_busy_max == runs[0].compute_busy_max and row.sim_seconds == 3.0
    assert row.method.startswith("scaled: quadratic in S") and row.status == "ok"
    assert row.us == pytest.approx(arch.cycles_to_us(row.cycles))
    assert row.roofline_fraction == pytest.approx(100.0 / (2.0 * 1600**2))
    from loom.report.eval_tables import table2

    loom = dataclasses.replace(base, policy="loom", cycles=row.cycles / 2)
    text = table2([loom, row])
    assert "loom / ttnn-sdpa (no config)" in text and "2.000x (1)" in text
    assert "not a full simulation: ttnn-sdpa on flash_attention wormhole_n150 (scaled" in text
    assert "not a full simulation" not in table2([loom, dataclasses.replace(row, method="")])


def test_the_evaluation_builds_the_scaled_row_from_three_simulations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the threshold lowered, Wormhole's B=1, H=8, S=4096 `ttnn-sdpa` row is the fit
    of its full simulations at 1024, 512 and 256 (whole query chunks per core), its
    schedule the full length's; with the threshold as it is, the row is simulated."""
    from loom.dataflow import build_buffers
    from loom.eval.run import EvalOptions, _baseline_row, _baselines, _Case
    from loom.flows.helion import run_frontend

    monkeypatch.setattr(scaled, "MIN_CHUNK_STEPS", 1)
    c = case("flash_attention", "wormhole_n150", {"B": 1, "H": 8, "S": 4096, "D": 64})
    state = _Case(c, EvalOptions(top_k=1))
    program = run_frontend(state.spec, c.shape_dict, state.log)
    make = dict(_baselines(c, state.arch))["ttnn-sdpa"]
    row = _baseline_row(state, "ttnn-sdpa", make, program, build_buffers(program))
    assert row is not None and row.status == "ok" and row.method.startswith("scaled")
    assert row.shape == "B=1,H=8,S=4096,D=64" and "tile_m=32" in row.block_sizes
    runs = []
    for n in (1024, 512, 256):
        sub = _Case(case(c.kernel, c.arch, {**c.shape_dict, "S": n}), EvalOptions(top_k=1))
        sub_program = run_frontend(sub.spec, sub.case.shape_dict, sub.log)
        sub_make = dict(_baselines(sub.case, sub.arch))["ttnn-sdpa"]
        sub_row = _baseline_row(sub, "ttnn-sdpa", sub_make, sub_program, build_buffers(sub_program))
        assert sub_row is not None and sub_row.method == ""
        runs.append(sub_row.cycles)
    fitted = quadratic_at((1024.0, 512.0, 256.0), tuple(runs), 4096.0)
    assert row.cycles == pytest.approx(fitted, abs=0.1)


@pytest.mark.slow
def test_the_fit_is_within_two_percent_of_the_full_simulation() -> None:
    """Wormhole, B=1, H=8, S=4096, D=64 (8 times the work of `--fa-scale 8`): the fit
    from 1024, 512 and 256 against the full simulation (benchmarks/sdpa_scaled.py gives
    more lengths, causal and Blackhole)."""
    from loom.eval.run import baseline_program
    from loom.sim import simulate

    arch = load_arch("wormhole_n150")

    def cycles(s: int) -> float:
        c = case("flash_attention", arch.name, {"B": 1, "H": 8, "S": s, "D": 64})
        return simulate(baseline_program(c, "ttnn-sdpa"), arch).cycles

    fitted = quadratic_at((1024.0, 512.0, 256.0), (cycles(1024), cycles(512), cycles(256)), 4096)
    assert fitted == pytest.approx(cycles(4096), rel=0.02)
