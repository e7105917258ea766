"""Tensors with one row per block: the partial results each block writes at its own
`tile.id` (`grad_weight[mb_cta.id, :] = grad_w_m`), reduced afterwards by the host code
after the loop or by a later launch.

Such a tensor's shape depends on the block count (`x.new_empty([cdiv(m, m_block), n])`),
and Loom lays tensors out before its solver picks block sizes, so the block size the
shape is computed from is fixed first (:func:`pinned_size`) and the host code that
allocates and reduces the tensor is replayed with that size (`hl.register_block_size`
returns it). A block's row of a 2-D tensor is one row inside a 32x32 tile, which no
block can write alone: the tensor is stored as `[blocks, 1, n]`, each block's row padded
to a tile row of its own (a leading dim, one entry per block); the host sees `[blocks, n]`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from loom.ir.geometry import TILE
from loom.ir.tile import ForLoop, If, Load, Op, Store, TensorArg, Window
from loom.symbolic import Const


def pinned_size(extent: int) -> int:
    """The block size fixed for a block whose size shapes a host tensor: one tile of
    rows (the most blocks, so the most cores, that whole tiles allow), or the whole
    extent when it is not a multiple of the tile."""
    return TILE if extent >= TILE and extent % TILE == 0 else extent


def register_block_size(*bounds: int) -> int:
    """`hl.register_block_size(n)` (or `(lo, n)`) as Loom replays host code: the size
    Loom fixes for a block that shapes a host tensor (:func:`pinned_size`)."""
    return pinned_size(int(bounds[-1]))


def with_pinned(size: object, origins: Mapping[Any, Any], pinned: Mapping[int, int]) -> int | None:
    """A size Helion leaves symbolic (`cdiv(m, m_block)` rows) as a number, in the block
    sizes fixed before solving (`pinned`, by block id; `origins`: Helion's host symbol
    origins); None when it depends on anything else."""
    expr: Any = getattr(getattr(size, "node", None), "expr", size)  # a sympy expression
    values = {}
    for sym in getattr(expr, "free_symbols", ()):
        origin = getattr(origins.get(sym), "origin", None)
        bid = getattr(origin, "block_id", None)
        if type(origin).__name__ == "BlockSizeOrigin" and isinstance(bid, int) and bid in pinned:
            values[sym] = pinned[bid]
    number = expr.subs(values) if values else expr
    return int(number) if getattr(number, "is_number", False) else None


def _with_unit_row(window: tuple[Window, ...]) -> tuple[Window, ...]:
    """`(rows, cols)` -> `(rows, 1, cols)`: the block's row becomes a leading index."""
    return (*window[:-1], Window(Const(0), Const(1)), window[-1])


def _rewrite(ops: Iterable[Op], tensors: frozenset[str]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Load | Store) and op.tensor in tensors:
            op = replace(op, window=_with_unit_row(op.window))
        elif isinstance(op, ForLoop | If):
            op = replace(op, body=_rewrite(op.body, tensors))
        out.append(op)
    return tuple(out)


def lift_block_rows(
    args: tuple[TensorArg, ...], body: tuple[Op, ...], tensors: frozenset[str]
) -> tuple[tuple[TensorArg, ...], tuple[Op, ...]]:
    """The tensors written one row per block stored as `[blocks, 1, n]` (see the module
    docstring), and every access of them given the unit row."""
    if not tensors:
        return args, body
    lifted = tuple(
        replace(a, shape=(*a.shape[:-1], 1, a.shape[-1])) if a.name in tensors else a for a in args
    )
    return lifted, _rewrite(body, tensors)
