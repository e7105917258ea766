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
one rule, both sides.
"""

from __future__ import annotations

from loom.ir.tile import ForLoop, TileProgram, walk
from loom.symbolic import Const, Expr, ceildiv, mod


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
