"""The SDPA calibration's row parser and its fixed fit/held-out split
(`benchmarks/calibration_attention.py`), on records written as the published file writes
them (the file itself lives beside the repository)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from calibration_attention import (
    CALIBRATION,
    SDPA_FILE,
    SdpaRow,
    fit_half,
    loom_wall_steps,
    parse_row,
    sdpa_records,
    step_math,
    timed_rows,
    ttnn_formats,
    ttnn_mean_steps,
    ttnn_wall_steps,
)

BASE = {
    "device": "p100a",
    "arch": "blackhole",
    "clock_ghz": "1.35",
    "grid": "(8,8)",
    "num_cores": "64",
    "op": "scaled_dot_product_attention (prefill)",
    "kernel_path": "non-streaming (fp32_dest_acc_en selects it, see #55759)",
    "causal": "True (inferred: tt_transformers prefill)",
    "batch": "1",
    "n_q_heads": "32",
    "n_kv_heads": "8",
    "seq_len": "4096",
    "kv_len": "4096",
    "head_dim_qk": "128",
    "head_dim_v": "128",
    "q_chunk": "256",
    "k_chunk": "256",
    "dtype_q": "bfloat8_b",
    "dtype_kv": "bfloat8_b",
    "math_fidelity": "HiFi4",
    "fp32_dest_acc_en": "True",
    "exp_approx_mode": "False",
    "metric": "device_time",
    "value": "2950",
    "unit": "us",
    "notes": "",
    "source": "https://github.com/tenstorrent/tt-metal/issues/56694",
}


def rec(**changes: str) -> dict[str, str]:
    return {**BASE, **changes}


def test_a_device_time_row_is_read_with_its_configuration() -> None:
    row = parse_row(2, rec())
    assert isinstance(row, SdpaRow)
    assert row.measured_us == 2950.0 and row.metric == "device_time"
    assert row.grid == (8, 8) and row.causal and row.shape == (1, 32, 4096, 128)
    assert row.chunks == (256, 256) and row.dtype == "bfp8" and row.fidelity == "HiFi4"
    assert row.fp32_acc and row.kernel == "non-streaming" and row.source == "56694"


def test_cycles_are_converted_at_the_rows_clock() -> None:
    row = parse_row(2, rec(metric="device_kernel_cycles", value="259602", unit="cycles"))
    assert isinstance(row, SdpaRow)
    assert row.measured_us == pytest.approx(259602 / 1350.0)


@pytest.mark.parametrize(
    ("grid", "want"),
    [
        ("(11,10)", (11, 10)),
        ("110 cores", (11, 10)),
        ("64 cores", (8, 8)),
        ("p100a (110 worker cores per the issue series; not restated in the table)", (11, 10)),
        ("", (11, 10)),
    ],
)
def test_grids_as_the_file_writes_them(grid: str, want: tuple[int, int]) -> None:
    row = parse_row(2, rec(grid=grid))
    assert isinstance(row, SdpaRow) and row.grid == want


def test_the_kernel_path_follows_the_accumulation_flag_when_not_named() -> None:
    on = parse_row(2, rec(kernel_path="", fp32_dest_acc_en="True"))
    off = parse_row(2, rec(kernel_path="", fp32_dest_acc_en=""))
    named = parse_row(2, rec(kernel_path="streaming (#57140)", fp32_dest_acc_en="True"))
    assert isinstance(on, SdpaRow) and on.kernel == "non-streaming"
    assert isinstance(off, SdpaRow) and off.kernel == "streaming" and not off.fp32_acc
    assert isinstance(named, SdpaRow) and named.kernel == "streaming"


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"metric": "math_busy"}, "counter"),
        ({"q_chunk": "", "k_chunk": ""}, "chunk sizes not published"),
        ({"kernel_path": "streaming; after (causal K/V prefix forwarding chains)"}, "chains"),
        ({"notes": "with K/V forwarding chains (#56937 and #57016): 1,836 -> 1,352 us"}, "chains"),
        ({"q_chunk": "64/128/256/512"}, "chunk sizes not published"),
    ],
)
def test_rows_left_out_say_why(changes: dict[str, str], why: str) -> None:
    got = parse_row(2, rec(**changes))
    assert isinstance(got, str) and why in got


def test_a_restated_measurement_is_kept_once() -> None:
    records = [rec(), rec(metric="device_cycles", value="3983028", unit="cycles")]
    rows, skipped = timed_rows(records)
    assert [r.metric for r in rows] == ["device_time"]
    assert skipped == [(3, "restates the device_time row of its source")]
    other = rec(metric="device_cycles", value="3983028", source="elsewhere/1")
    rows, _ = timed_rows([rec(), other])
    assert len(rows) == 2


def test_the_split_alternates_configurations_in_file_order() -> None:
    records = [
        rec(),
        rec(grid="(11,10)"),
        rec(value="2994.4", source="pull/56898"),  # the 1st configuration again
        rec(q_chunk="128", k_chunk="128"),
        rec(q_chunk="64", k_chunk="64"),
    ]
    rows, _ = timed_rows(records)
    fit = fit_half(rows)
    halves = ["fit" if r.config in fit else "held" for r in rows]
    assert halves == ["fit", "held", "fit", "fit", "held"]


@pytest.mark.parametrize(
    ("changes", "steps"),
    [
        ({}, 68),  # 8 x 8: 512 chunks, 8 per core = 4 zigzag pairs of 17 steps
        ({"grid": "(11,10)"}, 50),  # 5 per core: 16 + 2 + 15 + 3 + 14 at worst
        ({"grid": "(11,10)", "seq_len": "8192"}, 165),  # 10 per core: 5 pairs of 33
        ({"grid": "(11,10)", "q_chunk": "256", "k_chunk": "128"}, 100),  # 2 key chunks each
        ({"grid": "(11,10)", "causal": "False", "q_chunk": "128", "k_chunk": "128"}, 320),
    ],
)
def test_ttnn_spreads_flat_work_in_zigzag_order(changes: dict[str, str], steps: int) -> None:
    """TTNN's busiest core, as the published per-step cycles imply (2950 us / 68 steps
    and 2237 us / 50 steps are both about 59,000 cycles a step)."""
    row = parse_row(2, rec(**changes))
    assert isinstance(row, SdpaRow) and ttnn_wall_steps(row) == steps


def _schedule(view: tuple[tuple[str, int, str], ...], row: SdpaRow, deal: str = ""):  # type: ignore[no-untyped-def]
    from loom.baselines.build import mapping_of
    from loom.ir.schedule import Schedule, grid_waves

    b, h, s, _ = row.shape
    mapping = mapping_of(view)
    sizes = {"tile_b": 1, "tile_m": row.chunks[0]}
    waves = grid_waves({"tile_b": b * h, "tile_m": s}, mapping, sizes, deal)
    return Schedule(
        "flash_attention_causal", "blackhole_p100a", {}, "bf16", "HiFi2", "", mapping, (),
        sizes, {}, waves=waves, deal=deal,
    )  # fmt: skip


def test_loom_deal_counts_padding_chunks() -> None:
    # S=1024, q=k=128, causal: 8 chunks over 3 cores in 3 waves, dealt back and forth
    # (`loom.ir.deal`); the last core takes chunks 2, 3 (the mirrored wave) and the padding
    # chunk 8, which visits 9 key chunks (round-robin's last core: 2, 5, 8, 3 + 6 + 9).
    row = parse_row(2, rec(seq_len="1024", q_chunk="128", k_chunk="128", grid="(11,10)", batch="1",
                           n_q_heads="1"))  # fmt: skip
    assert isinstance(row, SdpaRow) and row.causal
    assert loom_wall_steps(row, _schedule((("x", 3, "tile_m"),), row)) == 3 + 4 + 9
    two = parse_row(2, rec(seq_len="1024", q_chunk="128", k_chunk="128", n_q_heads="2"))
    assert isinstance(two, SdpaRow)
    assert loom_wall_steps(two, _schedule((("x", 8, "tile_m"),), two)) == 2 * 8


@pytest.mark.parametrize(
    "changes",
    [{}, {"grid": "(11,10)"}, {"grid": "(11,10)", "seq_len": "8192"},
     {"grid": "(11,10)", "q_chunk": "256", "k_chunk": "128"},
     {"grid": "(11,10)", "seq_len": "1024", "q_chunk": "128", "k_chunk": "128"}],
)  # fmt: skip
def test_the_dealt_replay_has_ttnns_busiest_core(changes: dict[str, str]) -> None:
    """Under the zigzag deal TTNN's causal baseline selects, the lowering's indices give
    the replay's busiest core exactly TTNN's block steps (counted independently)."""
    from loom.baselines.ttnn_sdpa import sdpa_policy

    row = parse_row(2, rec(**changes))
    assert isinstance(row, SdpaRow)
    b, h, s, d = row.shape
    policy = sdpa_policy({"B": b, "H": h, "S": s, "D": d}, row.grid, True, None, row.chunks)
    assert policy.deal == "zigzag"
    schedule = _schedule(policy.view, row, policy.deal)
    assert loom_wall_steps(row, schedule) == ttnn_wall_steps(row)


def test_ttnn_formats_set_the_inputs_and_intermediates() -> None:
    from loom.ir.program import Buffer, DramTensor, Program

    def tensor(name: str, role: str) -> DramTensor:
        return DramTensor(name, (1, 64, 64), "bf16", role, 2, 2)

    program = Program(
        "flash_attention",
        "blackhole_p100a",
        (1, 1),
        (tensor("q", "input"), tensor("k", "input"), tensor("out", "output")),
        (
            Buffer("q_tile", 2, 2, "bf16", 2, "load"),
            Buffer("k_tile", 2, 2, "bf16", 2, "load"),
            Buffer("acc", 2, 2, "fp32", 2, "state"),
            Buffer("qk_1", 2, 2, "fp32", 1, "compute"),
            Buffer("out_out", 2, 2, "bf16", 1, "store"),
        ),
        (),
        (),
        (),
        (),
    )
    got = ttnn_formats(program, "bfp8")
    assert [t.dtype for t in got.tensors] == ["bfp8", "bfp8", "bf16"]
    assert [b.dtype for b in got.buffers] == ["bfp8", "bfp8", "bf16", "bf16", "bf16"]


@pytest.mark.skipif(not (CALIBRATION / SDPA_FILE).exists(), reason="published file absent")
def test_the_published_file_gives_timed_rows_in_both_halves() -> None:
    rows, skipped = timed_rows(sdpa_records())
    fit = fit_half(rows)
    assert len(rows) >= 20 and skipped
    assert any(r.config in fit for r in rows) and any(r.config not in fit for r in rows)
    assert all(r.measured_us > 0 for r in rows)


def test_step_math_is_one_key_step_of_the_innermost_loop() -> None:
    """The fills before the key loop, a peeled last step beside it and the output after
    it are not a step's math; two steps in one loop body are halved."""
    from loom.arch import load_arch
    from loom.ir.program import (
        BinaryExpr,
        BlockRef,
        Buffer,
        Compute,
        FillExpr,
        IfCore,
        Loop,
        MatmulExpr,
        Program,
        Reserve,
    )
    from loom.sim.compute_cost import CostModel
    from loom.sim.params import from_arch
    from loom.symbolic import Const, Sym
    from loom.symbolic.cond import BoolConst

    arch = load_arch("blackhole_p100a")
    score = Compute("s", MatmulExpr(BlockRef("q"), BlockRef("k"), transpose_rhs=True))
    update = Compute(
        "o", BinaryExpr("add", BlockRef("o"), MatmulExpr(BlockRef("s"), BlockRef("v")))
    )
    fill = Compute("o", FillExpr(0.0, 2, 2))
    step = (Reserve("s", (score,)), Reserve("o", (update,)))
    buffers = tuple(Buffer(n, 2, 2, "bf16", 2) for n in ("q", "k", "v", "s", "o"))

    def program(key_body: tuple) -> Program:  # type: ignore[type-arg]
        key = Loop(Sym("n", 0, 7), Const(8), key_body)
        peeled = IfCore(BoolConst(True), step, ())
        wave = Loop(Sym("w", 0, 3), Const(4), (Reserve("o", (fill,)), key, peeled, *step))
        return Program("attention", arch.name, (1, 1), (), buffers, (), (), (wave,), ())

    costs = CostModel(arch, from_arch(arch), program(step), True)
    want = costs.cost(score).math_cycles + costs.cost(update).math_cycles
    assert step_math(program(step), arch) == want
    assert step_math(program(step + step), arch) == want


def test_ttnn_mean_steps_average_the_block_steps_over_the_grid() -> None:
    """Causal S=4096 at q=k=256: 32 heads x (1 + ... + 16) = 4352 block steps; on 8 x 8
    every core does 68 (the zigzag pairs), on 11 x 10 they average 39.6."""
    rec = {**BASE, "metric": "device_time", "value": "1"}
    row = parse_row(2, rec)
    assert isinstance(row, SdpaRow)
    assert ttnn_mean_steps(row) == 68 == ttnn_wall_steps(row)
    wide = parse_row(2, {**rec, "grid": "(11,10)"})
    assert isinstance(wide, SdpaRow)
    assert ttnn_mean_steps(wide) == pytest.approx(4352 / 110)
