"""A value stored in one inner loop, read back in a later inner loop of the same block
(Helion's `squeeze_and_excitation_net`: `c[tile_m, tile_k] = relu(x[tile_m, :] @
a[:, tile_k])` in one `hl.tile(k)` loop, `c[tile_m, tile_k]` read by the next).

The block's loads and stores run on separate data-movement threads that do not wait for
each other, so reading the tile back from DRAM would race its store. Where the stored
value is computed in the storing loop's body from loads of tensors the kernel does not
write (and elementwise ops, conversions, new axes, fills and matmuls over them), and the
read names the same window (the loops share their tile symbols), the read recomputes
that value from its producers instead: no DRAM round trip, no race, and the model costs
the recomputed ops as any others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    If,
    Load,
    Matmul,
    Op,
    Store,
    Value,
    Window,
)

_RECOMPUTABLE = (Load, Elementwise, Convert, ExpandDims, Full, Matmul)


def _storing_body(ops: list[Op] | tuple[Op, ...], tensor: str) -> tuple[Op, ...] | None:
    """The body of the inner loop (or guard) holding the last store of `tensor`, in
    program order; None where that store is not in one."""
    last: tuple[Op, ...] | None = None
    for op in ops:
        if isinstance(op, Store) and op.tensor == tensor:
            last = None  # stored at this level after any inner loop
        elif isinstance(op, ForLoop | If) and _stores(op.body, tensor):
            inner = _storing_body(op.body, tensor)
            direct = any(isinstance(o, Store) and o.tensor == tensor for o in op.body)
            last = inner if inner is not None else (op.body if direct else None)
    return last


def _stores(ops: tuple[Op, ...], tensor: str) -> bool:
    return any(
        (isinstance(o, Store) and o.tensor == tensor)
        or (isinstance(o, ForLoop | If) and _stores(o.body, tensor))
        for o in ops
    )


def recompute_stored(
    ops: list[Op],
    tensor: str,
    last: tuple[tuple[Window, ...], Value],
    written: set[str],
    renamed: Callable[[Value, str], Value],
) -> tuple[list[Op], Value] | None:
    """The ops that recompute what an earlier inner loop among `ops` stored into
    `tensor`, and their result, where that store is the last one (`last`: the window
    read and the value the kernel stored last); None where that cannot be done (another
    store since, another window, a producer outside that loop body, a load of a tensor
    in `written`, an op other than a load, elementwise op, conversion, new axis, fill or
    matmul)."""
    body = _storing_body(ops, tensor)
    if body is None:
        return None
    stores = [o for o in body if isinstance(o, Store) and o.tensor == tensor]
    window, value = last
    if len(stores) != 1 or stores[0].window != window or stores[0].value != value:
        return None
    producers = {r.name: o for o in body for r in o.results()}
    order: list[Op] = []

    def visit(v: Value) -> bool:
        op = producers.get(v.name)
        if op is None:
            return False  # defined outside the storing loop: not known to be in scope
        if op in order:
            return True
        if not isinstance(op, _RECOMPUTABLE):
            return False
        if isinstance(op, Load) and op.tensor in written:
            return False
        if not all(visit(x) for x in op.operands()):
            return False
        order.append(op)
        return True

    if not visit(stores[0].value):
        return None
    mapping: dict[str, Value] = {}
    cloned: list[Op] = []
    for op in order:
        cloned.append(_clone(op, mapping, renamed))
    return cloned, mapping[stores[0].value.name]


def _clone(op: Op, mapping: dict[str, Value], renamed: Callable[[Value, str], Value]) -> Op:
    results = {r.name for r in op.results()}

    def moved(x: object) -> object:
        if isinstance(x, Value):
            if x.name in results:
                fresh = renamed(x, f"{x.name}_again")
                mapping[x.name] = fresh
                return fresh
            return mapping.get(x.name, x)
        if isinstance(x, tuple):
            return tuple(moved(e) for e in x)
        return x

    changes = {f.name: moved(getattr(op, f.name)) for f in dataclasses.fields(op)}
    return dataclasses.replace(op, **changes)
