"""How a grid axis's tiles are dealt to its cores over waves.

A core with spatial index `c` (of `f` along the axis) runs tile `c + w * f` in wave `w`
(round-robin), unless the axis carries triangular work: an inner loop whose trip count
grows with the axis's tile index (`hl.tile(0, tile_m.end)`, causal attention). Round-robin
gives the last core the largest tile of every wave, so at two waves it runs 24 key steps
where the average core runs 17 (16 query tiles on 8 cores). There the deal goes back and
forth (boustrophedon): wave `w` runs forward when `w` is even and backward when odd, tile
`w * f + (f - 1 - c)`, so each pair of waves gives every core one tile from the front and
its mirror from the back, the same work on every core: TTNN's ``BALANCED_Q_PARALLEL``
(its causal SDPA hands each core query chunks from both ends). The lowering deals with
`logical_index`, the latency model charges the busiest core with `busiest_mean_index`:
one rule, both sides. A schedule may instead deal every grid block ``zigzag``
(`Schedule.deal`, TTNN's SDPA deal): `dealt_indices`, which the lowering writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom.ir.program import CORE_X, CORE_Y
from loom.ir.tile import ForLoop, TileProgram, walk
from loom.symbolic import Const, Expr, ceildiv, floordiv, minimum, mod

if TYPE_CHECKING:
    from loom.ir.schedule import Mapping


def triangular_indices(program: TileProgram) -> frozenset[str]:
    """Grid index names some inner loop's trip count depends on (triangular work)."""
    names: set[str] = set()
    for op in walk(program.body):
        if isinstance(op, ForLoop):
            names |= op.trip_count.free_names()
    return frozenset(a.index.name for a in program.grid if a.index.name in names)


def logical_index(spatial: Expr, wave: Expr, factor: int, balanced: bool) -> Expr:
    """The tile index a core runs in `wave`: round-robin, or back and forth when
    `balanced` (odd waves mirror the spatial index)."""
    if not balanced:
        return spatial + wave * factor
    return wave * factor + spatial + mod(wave, 2) * (Const(factor - 1) - spatial * 2)


def busiest_mean_index(factor: int, waves: Expr, balanced: bool) -> Expr:
    """The mean tile index over its waves of the core that does the most triangular work
    (work affine in the index: that core's mean work is the work at this index). Round-
    robin: the last core, (f - 1) + f (W - 1) / 2. Back and forth: every pair of waves
    averages (2 f - 1) / 2 per wave over the pair's base, so an even W gives every core
    (f W - 1) / 2; an odd W adds a last forward wave whose last core runs f W - 1, which
    raises the mean by (f - 1) / (2 W). Rounded up (the model's bound is conservative)."""
    f = Const(factor)
    if not balanced:
        return f - 1 + ceildiv(f * (waves - 1), 2)
    odd = mod(waves, 2)
    return ceildiv(waves * (f * waves - 1) + (f - 1) * odd, waves * 2)


def dealt_indices(
    mapping: Mapping, tiles: tuple[tuple[str, int], ...], wave: Expr
) -> dict[str, Expr]:
    """Each grid axis's tile index under the ``zigzag`` deal (`loom.ir.schedule.DEALS`):
    `tiles` the (axis, block count) of every grid axis, outermost first; `wave` the
    counter of the core's run. The flat index ``f = run x (y x cores_x + x) + wave``
    splits into the axes' indices (the outermost unbounded: runs past the end reach
    padding rows), the innermost in zigzag order (``f mod N`` even: its half; odd: ``N - 1``
    less its half). A padding run (``f`` past the last block) takes the innermost axis's
    first block, the lightest of a causal key loop (TTNN leaves those cores idle)."""
    counts = [n for _, n in tiles]
    total = 1
    for n in counts:
        total *= n
    run = -(-total // mapping.num_cores)
    flat = (CORE_Y * mapping.cores_x + CORE_X) * run + wave
    inner = counts[-1]
    pos = mod(flat, inner)
    half = floordiv(pos, 2)
    zigzag = half + mod(pos, 2) * (inner - 1 - 2 * half)
    real = 1 - minimum(floordiv(flat, total), 1)
    out: dict[str, Expr] = {tiles[-1][0]: zigzag * real}
    stride = inner
    for i in range(len(tiles) - 2, -1, -1):
        index = floordiv(flat, stride)
        out[tiles[i][0]] = index if i == 0 else mod(index, counts[i])
        stride *= counts[i]
    return out
