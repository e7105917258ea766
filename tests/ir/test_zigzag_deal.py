"""The ``zigzag`` deal (`loom.ir.deal.dealt_indices`, TTNN's SDPA deal): contiguous
runs of the flat (outer, inner) blocks per core, the inner axis in zigzag order."""

from __future__ import annotations

from collections import Counter

import pytest

from loom.ir.deal import dealt_indices
from loom.ir.program import CORE_X, CORE_Y
from loom.ir.schedule import Mapping, MeshLevel
from loom.symbolic import Sym


def _deal(grid: tuple[int, int], rows: int, inner: int) -> dict[tuple[int, int], list]:
    gx, gy = grid
    mapping = Mapping((MeshLevel("x", 0, gx, "tile_m"), MeshLevel("y", 0, gy, "tile_m")))
    run = -(-rows * inner // (gx * gy))
    wave = Sym("tile_m_wave", 0, run - 1, 1, "index")
    exprs = dealt_indices(mapping, (("tile_b", rows), ("tile_m", inner)), wave)
    return {
        (y, x): [
            tuple(
                exprs[a].eval({CORE_X.name: x, CORE_Y.name: y, wave.name: w})
                for a in ("tile_b", "tile_m")
            )
            for w in range(run)
        ]
        for y in range(gy)
        for x in range(gx)
    }


def test_a_core_takes_a_contiguous_zigzag_run() -> None:
    # 8 x 8 cores, 32 rows x 16 blocks: runs of 8, core (0, 1) the second half of row 0
    dealt = _deal((8, 8), 32, 16)
    assert dealt[(0, 0)] == [(0, m) for m in (0, 15, 1, 14, 2, 13, 3, 12)]
    assert dealt[(0, 1)] == [(0, m) for m in (4, 11, 5, 10, 6, 9, 7, 8)]
    assert dealt[(7, 7)] == [(31, m) for m in (4, 11, 5, 10, 6, 9, 7, 8)]


@pytest.mark.parametrize(
    ("grid", "rows", "inner"), [((11, 10), 32, 16), ((11, 10), 32, 8), ((8, 8), 3, 5)]
)
def test_every_block_once_and_padding_at_the_first_block(
    grid: tuple[int, int], rows: int, inner: int
) -> None:
    dealt = _deal(grid, rows, inner)
    taken = Counter(b for run in dealt.values() for b in run)
    real = {(r, m) for r in range(rows) for m in range(inner)}
    assert all(taken[b] == 1 for b in real)
    assert all(r >= rows and m == 0 for (r, m) in set(taken) - real)
