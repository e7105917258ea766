"""TTNN's default-config attention (`ttnn-sdpa`, 32 x 32 chunks, not causal) at the
paper's tokens, scaled rather than simulated in full: the one row of the evaluation that
is not a full simulation, and says so (`ResultRow.method`).

At the paper's tokens its 32 x 32 chunks make millions of chunk steps, the evaluation's
longest simulation. Its per-core work is `q` query chunks of `S/32` key steps each, with
`q` proportional to S: a cost quadratic in the sequence length (a fixed part, a part
per query chunk, a part per chunk step). So the policy is simulated in full at S/4, S/8
and S/16 (the same B, H, D; TTNN's own rule builds each), and the quadratic through the
three simulated totals is evaluated at S. The DRAM and multicast bytes are fitted the
same way; the busy fractions and the busiest link are the S/4 run's. The three runs cost
about 1/12 of the full one. Its error against full simulations (benchmarks/sdpa_scaled.py,
docs/evaluation.md): +1.06% at S = 4096 and -0.38% at 8192 on Wormhole (B=1, H=8, D=64).

It is applied only where every reduced length gives each core a whole number of query
chunks under the same split of TTNN's rule (Wormhole's paper cases: 4 to 64 per core):
Blackhole's 16 cores per head get fractions of that (1.875 at S/16), and the fit is 40%
off at S = 5120 there. The causal kernel is simulated in full: its zigzag deal of a
triangle of chunk steps is not as smooth a quadratic (the same fit is 15.9% off at 4096
and 6.1% at 8192 on Wormhole).
"""

from __future__ import annotations

import dataclasses

from loom.arch import Arch
from loom.baselines.ttnn_sdpa import sdpa_split
from loom.eval.cases import EvalCase, case
from loom.eval.rows import ResultRow

SCALED_POLICIES = ("ttnn-sdpa",)
DIVISORS = (4, 8, 16)
"""The reduced lengths, S / each."""
MIN_CHUNK_STEPS = 2**19
"""Cases whose 32 x 32 chunk steps (B*H*(S/32)^2) reach this are scaled: the paper's
tokens (1 to 2 million steps), not `--fa-scale 8` (at most 32,768)."""
TILE = 32


def scaled_lengths(c: EvalCase, policy: str, cores: int) -> tuple[int, ...]:
    """The reduced sequence lengths `policy` of `c` (on `cores` cores) is simulated at,
    largest first; empty when it is simulated in full: below `MIN_CHUNK_STEPS`, or where
    a reduced length would not give every core a whole number of query chunks under the
    same split of TTNN's rule (Blackhole's 16 cores per head: its per-core work then
    changes shape with S, and the fit does not hold, 40% off at S = 5120)."""
    if policy not in SCALED_POLICIES or c.kernel != "flash_attention":
        return ()
    s = c.shape_dict
    if s["B"] * s["H"] * (s["S"] // TILE) ** 2 < MIN_CHUNK_STEPS:
        return ()
    split = sdpa_split(s["B"], s["H"], s["S"], cores, TILE)
    lengths = tuple(s["S"] // d for d in DIVISORS)
    for n, d in zip(lengths, DIVISORS, strict=True):
        whole = n * d == s["S"] and n % (TILE * split[2]) == 0
        if not whole or sdpa_split(s["B"], s["H"], n, cores, TILE) != split:
            return ()
    return lengths


def reduced(c: EvalCase, length: int) -> EvalCase:
    """`c` at sequence length `length`."""
    return case(c.kernel, c.arch, {**c.shape_dict, "S": length})


def quadratic_at(xs: tuple[float, ...], ys: tuple[float, ...], x: float) -> float:
    """The quadratic through three points (xs, ys), at `x` (Lagrange's form)."""
    (x0, x1, x2), (y0, y1, y2) = xs, ys
    return (
        y0 * (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2))
        + y1 * (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2))
        + y2 * (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1))
    )


def scaled_row(
    full: ResultRow, runs: tuple[ResultRow, ...], lengths: tuple[int, ...], length: int,
    flops: float, arch: Arch, launch_cycles: float, roofline_cycles: float,
) -> ResultRow:  # fmt: skip
    """`full` (the row's schedule at length `length`, unsimulated) with the simulated
    columns fitted from `runs` (simulated at `lengths`, largest first)."""

    def fit(column: str) -> float:
        ys = tuple(float(getattr(r, column)) for r in runs)
        return quadratic_at(tuple(map(float, lengths)), ys, float(length))

    cycles = fit("cycles")
    us = arch.cycles_to_us(cycles)
    tflops = flops / (us * 1e-6) / 1e12 if us > 0 else 0.0
    peak = runs[0].tflops / runs[0].utilization if runs[0].utilization else 0.0
    kernel = cycles - launch_cycles
    big = runs[0]
    return dataclasses.replace(
        full,
        cycles=round(cycles, 1),
        us=us,
        tflops=tflops,
        utilization=tflops / peak if peak else 0.0,
        compute_busy_max=big.compute_busy_max,
        reader_busy_max=big.reader_busy_max,
        writer_busy_max=big.writer_busy_max,
        dram_read_bytes=fit("dram_read_bytes"),
        noc_multicast_bytes=fit("noc_multicast_bytes"),
        busiest_link=big.busiest_link,
        roofline_fraction=roofline_cycles / kernel if kernel > 0 else 0.0,
        sim_seconds=sum(r.sim_seconds for r in runs),
        method=f"scaled: quadratic in S through S/{', S/'.join(map(str, DIVISORS))}",
    )
