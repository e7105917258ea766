"""The judge's shrunk runs (`benchmarks/shrink.py`) keep what the extrapolation rests on:
every tile left at a smaller size sits on the bank it occupies at full size, each core's
last (partial) step or wave is unchanged, and each shrunk dimension's two sizes halve
its work."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pytest import approx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from loom.ir.geometry import TILE
from shrink import AXES, FRACTION, gemm_reduction, reduced_sizes


def bank(row: int, col: int, width: int, banks: int) -> int:
    """Pages interleave round-robin over the banks in row-major tile order."""
    return (row * width + col) % banks


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    tiles=st.dictionaries(st.sampled_from("MNK"), st.integers(8, 640), min_size=3),
    block=st.dictionaries(st.sampled_from("MNK"), st.integers(1, 24), min_size=3),
    cores=st.dictionaries(st.sampled_from("MN"), st.integers(1, 13), min_size=2),
    banks=st.sampled_from((7, 8, 12)),
)
def test_reduction_keeps_banks_and_last_wave(
    tiles: dict[str, int], block: dict[str, int], cores: dict[str, int], banks: int
) -> None:
    shape = {d: t * TILE for d, t in tiles.items()}
    r = gemm_reduction(shape, block, cores, banks)
    if r is None:
        return
    assert 1 <= len(r.axes) <= AXES and len({a.dim for a in r.axes}) == len(r.axes)
    for a in r.axes:
        full = tiles[a.dim]
        assert a.tiles == full and 0 < a.sizes[0] < a.sizes[1] < full
        assert 2 * sum(a.sizes) <= full
        unit = block["K"] if a.dim == "K" else cores[a.dim] * block[a.dim]
        assert all(size % unit == full % unit for size in a.sizes)  # the last step or wave
    for point in r.points:
        small = {d: s // TILE for d, s in r.shape_at(shape, point).items()}
        # A is M x K, B is K x N, C is M x N: every tile left keeps its bank.
        for rows, cols in (("M", "K"), ("K", "N"), ("M", "N")):
            for row in range(min(small[rows], 3)):
                for col in range(small[cols]):
                    at_full = bank(row, col, tiles[cols], banks)
                    assert bank(row, col, small[cols], banks) == at_full


def test_sizes_start_past_the_fraction_and_the_least_units() -> None:
    assert reduced_sizes(32 * FRACTION, 1, 1, 1) == (32, 64)
    # 512 tiles in steps of 8 over 12 banks: sizes ≡ 512 (mod 96), at least 2 steps.
    assert reduced_sizes(512, 8, 96, 2) == (32, 128)
    # Waves of 32 tiles: at least one, then one more.
    assert reduced_sizes(512, 32, 32, 1) == (32, 64)
    # 64 tiles in steps of 8 over 12 banks: no pair of sizes halves the work.
    assert reduced_sizes(64, 8, 96, 2) is None


def test_extrapolation_is_the_line_through_both_runs() -> None:
    r = gemm_reduction(
        {"M": 512 * TILE, "N": 64 * TILE, "K": 64 * TILE},
        {"M": 4, "N": 8, "K": 2},
        {"M": 8, "N": 8},
        12,
    )
    assert r is not None and [a.dim for a in r.axes] == ["M"]
    assert r.extrapolate([100.0 + 3 * d for (d,) in r.points]) == approx(100.0 + 3 * 512)


def test_two_axes_extrapolate_a_bilinear_surface() -> None:
    """Time affine in the waves and in the depth, with a cross term (each wave's steps),
    is recovered exactly at the full size from the four runs."""
    r = gemm_reduction(
        {"M": 512 * TILE, "N": 16 * TILE, "K": 512 * TILE},
        {"M": 16, "N": 4, "K": 8},
        {"M": 2, "N": 4},
        12,
    )
    assert r is not None and [(a.dim, a.sizes) for a in r.axes] == [
        ("K", (32, 128)),
        ("M", (32, 64)),
    ]
    assert r.cost == approx(160 / 512 * 96 / 512)

    def time(k: int, m: int) -> float:
        return 1000.0 + 7.0 * k + 50.0 * m + 0.25 * k * m

    assert r.extrapolate([time(*p) for p in r.points]) == approx(time(512, 512))
    assert r.shape_at({"M": 1, "N": 2, "K": 3}, (32, 64)) == {
        "M": 64 * TILE,
        "N": 2,
        "K": 32 * TILE,
    }
