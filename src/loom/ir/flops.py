"""The floating-point work of a TileProgram, counted from its operations.

Reports need a kernel's flops for its TFLOPS figures, and a kernel file states them only
when it defines `flops(shape)` (the shipped kernels, by their published convention); every
other kernel, a user's GeGLU MLP as much as an rms_norm, gets them from its Tile IR here.

What counts, over the whole iteration space (every grid block, every loop trip):

* a matmul: 2·m·n·k per result block (m·n result elements, k the contraction), i.e.
  2·M·N·K over the kernel; adding into an accumulator is part of it;
* an elementwise op: one flop per result element, whatever its function (an add, an
  exp, a comparison or a max alike);
* a reduction: one flop per operand element it folds into another (n − 1 per result);
* loads, stores, fills, format conversions, views and gathers: none (data movement).

Beside the flops, `FlopCount.ops` keeps the elements each elementwise and reduction op
processes (its result, its operand), by op name: what the roofline prices at the
architecture's cycles per tile of that op (`loom.model.roofline`), since an exp costs the
SFPU many times an add.

Blocks are counted whole, at each block size's smallest legal value (32 for a tile
dimension), so the count does not depend on the schedule; a tail padded to a whole tile
counts its padding, as the cores compute it. A loop or a guard that depends on a grid or
loop index (a causal key loop, a split reduction's merge on block 0) is evaluated per index.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from loom.ir.tile import (
    Elementwise,
    ForLoop,
    If,
    Matmul,
    Op,
    Reduce,
    TileProgram,
    Value,
    walk,
)
from loom.symbolic import Sym

ENUMERATION_LIMIT = 1 << 16
"""Most grid-index combinations enumerated for index-dependent loops and guards (beyond
it the first index stands for all of them)."""


@dataclass(frozen=True, slots=True)
class FlopCount:
    """Floating-point operations of a program, by kind."""

    matmul: int = 0
    elementwise: int = 0
    reduction: int = 0
    ops: tuple[tuple[tuple[str, str], int], ...] = ()
    """((kind, op), elements) sorted: an elementwise op's result elements, a reduction's
    operand elements (kind `elementwise` or `reduce`)."""

    @property
    def total(self) -> int:
        return self.matmul + self.elementwise + self.reduction

    def __add__(self, other: FlopCount) -> FlopCount:
        merged = dict(self.ops)
        for key, n in other.ops:
            merged[key] = merged.get(key, 0) + n
        return FlopCount(
            self.matmul + other.matmul,
            self.elementwise + other.elementwise,
            self.reduction + other.reduction,
            tuple(sorted(merged.items())),
        )

    def times(self, n: int) -> FlopCount:
        return FlopCount(
            self.matmul * n,
            self.elementwise * n,
            self.reduction * n,
            tuple((key, m * n) for key, m in self.ops),
        )


def count_flops(program: TileProgram) -> FlopCount:
    """The flops of `program` and of every launch after it (`TileProgram.after`)."""
    total = FlopCount()
    for launch in program.launches():
        total += _launch_flops(launch)
    return total


def _smallest(sym: Sym) -> int:
    """The smallest legal value of a block size: its lower bound, rounded up to its
    alignment."""
    return max(sym.align, -(-sym.lower // sym.align) * sym.align)


def _launch_flops(program: TileProgram) -> FlopCount:
    env = {s.name: _smallest(s) for s in program.tile_syms}
    used = _index_names(program.body)
    enumerated = [a for a in program.grid if a.index.name in used]
    blocks = math.prod(a.num_tiles.eval(env) for a in program.grid if a not in enumerated)
    ranges = [range(a.num_tiles.eval(env)) for a in enumerated]
    combos = math.prod(len(r) for r in ranges)
    if combos > ENUMERATION_LIMIT:
        ranges, blocks = [range(1) for _ in ranges], blocks * combos
    total = FlopCount()
    for indices in itertools.product(*ranges):
        point = {**env, **{a.index.name: i for a, i in zip(enumerated, indices, strict=True)}}
        total += _ops_flops(program.body, point)
    return total.times(blocks)


def _ops_flops(ops: tuple[Op, ...], env: dict[str, int]) -> FlopCount:
    total = FlopCount()
    for op in ops:
        if isinstance(op, Matmul):
            k = op.lhs.shape[-1].eval(env)
            total += FlopCount(matmul=2 * _elements(op.result, env) * k)
        elif isinstance(op, Elementwise):
            n = _elements(op.result, env)
            total += FlopCount(elementwise=n, ops=((("elementwise", op.op), n),))
        elif isinstance(op, Reduce):
            n = _elements(op.operand, env)
            folded = max(n - _elements(op.result, env), 0)
            total += FlopCount(reduction=folded, ops=((("reduce", op.op), n),))
        elif isinstance(op, If):
            if op.cond.eval(env):
                total += _ops_flops(op.body, env)
        elif isinstance(op, ForLoop):
            trip = max(op.trip_count.eval(env), 0)
            if op.index.name in _index_names(op.body):
                for i in range(trip):
                    total += _ops_flops(op.body, {**env, op.index.name: i})
            else:
                total += _ops_flops(op.body, env).times(trip)
    return total


def _elements(value: Value, env: dict[str, int]) -> int:
    return math.prod(d.eval(env) for d in value.shape)


def _index_names(ops: tuple[Op, ...]) -> frozenset[str]:
    """Every symbol the work of `ops` depends on: those of loop bounds, guards and value
    shapes (block sizes among them, which the caller binds anyway)."""
    names: set[str] = set()
    for op in walk(ops):
        if isinstance(op, ForLoop):
            names |= op.begin.free_names() | op.end.free_names()
        elif isinstance(op, If):
            names |= op.cond.free_names()
        for v in (*op.operands(), *op.results()):
            for d in v.shape:
                names |= d.free_names()
    return frozenset(names)
