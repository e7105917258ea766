"""The per-core breakdown (`benchmarks/core_breakdown.py`) on a small GEMM: both runs
described engine by engine, the ratio the two simulations give."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from core_breakdown import TABLE_HEADER, binding_engine, breakdown, table, table_row
from loom.sim.result import EngineBusy


def test_gemm_breakdown_describes_both_runs_and_their_ratio() -> None:
    lines = breakdown("gemm", "wormhole_n150", "M=256,N=256,K=256", "ttnn-matmul-oob")
    text = "\n".join(lines)
    for engine in ("compute", "reader", "writer"):
        assert text.count(f"{engine:8} busy cycles per core") == 2
    assert text.count("block sizes tile_k=") == 2
    assert "ttnn-matmul-oob: " in text and "waves tile_m=" in text
    cycles = [float(m.replace(",", "")) for m in re.findall(r": ([\d,]+) cycles on", text)]
    ratio = float(re.search(r"loom / ttnn-matmul-oob: ([\d.]+)x", text).group(1))  # type: ignore[union-attr]
    assert ratio == round(cycles[1] / cycles[0], 3)


def test_binding_engine_is_the_busiest_on_its_busiest_core() -> None:
    class Sim:
        engine_busy = (
            EngineBusy("reader", 0.2, 0.5, 0.9),
            EngineBusy("compute", 0.6, 0.7, 0.8),
        )

    assert binding_engine(Sim()) == "reader"  # type: ignore[arg-type]


def test_a_layer_op_against_its_ttnn_op_and_one_without() -> None:
    """A layer op's breakdown names its TTNN op and the DRAM share of both runs; RMSNorm
    + residual has no TTNN op, so only Loom's run is described."""
    text = "\n".join(breakdown("softmax", "wormhole_n150", "M=64,N=512", "ttnn-softmax"))
    assert text.count("% of the 288.0 GB/s peak") == 2 and "loom / ttnn-softmax: " in text
    alone = "\n".join(breakdown("rms_norm_residual", "wormhole_n150", "M=64,N=512", None))
    assert alone.count("busy cycles per core") == 3 and "loom / " not in alone


def test_the_table_mode_gives_one_markdown_row_per_case_in_order() -> None:
    """`--table`: the header, then kernel x arch x shape in that order, each row the pick in
    short, its cycles and DRAM share, and the ratio to TTNN's op (`-`: none exists)."""
    lines = list(table(["rms_norm_residual", "softmax"], ["wormhole_n150"], ["M=64,N=512"], 2))
    assert tuple(lines[:2]) == TABLE_HEADER and len(lines) == 4
    residual, softmax = (row.split(" | ") for row in lines[2:])
    assert residual[0] == "| RMSNorm + residual, WH, 64×512" and residual[-1] == "- |"
    assert softmax[0] == "| softmax, WH, 64×512" and re.fullmatch(r"[\d.]+ \|", softmax[-1])
    for row in (residual, softmax):
        assert re.fullmatch(r"x\d+_y\d+( `__rd`)? (persistent|looped) \[[\d,]+\]", row[1])
        assert re.fullmatch(r"[\d.]+ \(\d+%\)", row[3])
        assert row[4].startswith("cores ") and " rd " in row[4] and "sim/model" in row[4]
    assert lines[2] == table_row("rms_norm_residual", "wormhole_n150", "M=64,N=512")
