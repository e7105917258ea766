"""The deal of a grid axis's tiles over waves: back and forth where the work is
triangular, every wave a permutation of its tiles, and the model's busiest-core index
the one the deal gives."""

from __future__ import annotations

import itertools

import pytest

from loom.ir.deal import busiest_mean_index, logical_index
from loom.symbolic import Const, Sym


def _dealt(factor: int, waves: int, balanced: bool) -> list[list[int]]:
    """Tile index per (core, wave) under the lowering's expression."""
    c, w = Sym("c", 0, factor - 1, 1, "index"), Sym("w", 0, waves - 1, 1, "index")
    expr = logical_index(c, w, factor, balanced)
    return [
        [int(expr.subs({"c": Const(ci), "w": Const(wi)}).value) for wi in range(waves)]
        for ci in range(factor)
    ]


@pytest.mark.parametrize(("factor", "waves"), list(itertools.product((1, 2, 5, 8), (1, 2, 3, 4))))
@pytest.mark.parametrize("balanced", [False, True])
def test_each_wave_runs_its_own_tiles_once(factor: int, waves: int, balanced: bool) -> None:
    dealt = _dealt(factor, waves, balanced)
    for w in range(waves):
        assert sorted(row[w] for row in dealt) == list(range(w * factor, (w + 1) * factor))


@pytest.mark.parametrize(("factor", "waves"), list(itertools.product((1, 2, 5, 8), (1, 2, 3, 4))))
@pytest.mark.parametrize("balanced", [False, True])
def test_model_index_bounds_the_busiest_core(factor: int, waves: int, balanced: bool) -> None:
    """Work affine in the index: the busiest core's summed index over its waves, at most
    one rounding above the model's mean index times the waves."""
    busiest = max(sum(row) for row in _dealt(factor, waves, balanced))
    model = busiest_mean_index(factor, Const(waves), balanced)
    assert isinstance(model, Const)
    assert busiest <= model.value * waves < busiest + waves


def test_two_waves_back_and_forth_give_every_core_the_same_work() -> None:
    """16 query tiles on 8 cores (causal attention at two waves): round-robin's last core
    runs 7 + 15, the back-and-forth deal gives every core 15 (TTNN's balanced split)."""
    assert {sum(row) for row in _dealt(8, 2, True)} == {15}
    assert max(sum(row) for row in _dealt(8, 2, False)) == 22
