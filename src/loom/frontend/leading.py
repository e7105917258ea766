"""Reductions over a leading axis (`x[:, tile_m, tile_n].sum(0)`), and stores of a whole
leading axis (`out[tile_b, :, tile_t, :] = ...`), rewritten as a loop.

Tiles are 2-D: a leading axis is folded into the rows of a block, so no tile engine
reduces along it. A reduction over it is the running combination of its slices, so the
frontend rewrites it into what a user would write by hand: an inner loop over the axis
(tile 1), whose body recomputes the reduced operand's producers on one slice (the
loads take the slice's window) and folds it into a carried accumulator with `add` or
`maximum`. Producers that do not depend on the axis (a mean broadcast back, a constant)
stay outside the loop. The original full-extent producers become dead and are dropped
by the caller (:func:`drop_dead`). A store of a whole leading axis (the heads of
`q[tile_b, :, tile_t, :]`) is the same loop without an accumulator: each trip recomputes
one slice and stores it into its slice of the window.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loom.ir.tile import (
    REDUCE_COMBINE,
    Carried,
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    If,
    Load,
    Op,
    Reduce,
    Store,
    Value,
    Window,
    reduce_identity,
    walk,
)
from loom.symbolic import Const, Sym


@dataclass(frozen=True)
class LeadingLoop:
    """The ops replacing `Reduce(op, x, axis)`: the accumulator's fill, the loop, and the
    names of the full-extent producers the loop made redundant."""

    ops: tuple[Op, ...]
    result: Value
    superseded: frozenset[str]


class LeadingAxisError(Exception):
    """A producer of the reduced operand that cannot be recomputed per slice."""

    def __init__(self, op: Op) -> None:
        super().__init__(type(op).__name__)
        self.op = op


def reduce_leading(
    scope_ops: list[Op],
    op: str,
    x: Value,
    axis: int,
    result: Value,
    rename: Callable[[Value, str], Value],
    line: int,
) -> LeadingLoop:
    """Loop over axis `axis` of `x` (a constant extent n) folding each slice into
    `result` (shaped as the reduction's result, with or without the kept axis)."""
    n = x.shape[axis]
    assert isinstance(n, Const)
    chain = _chain(scope_ops, (x,), axis, n)
    name = f"{result.name}_d{axis}"
    tile = Sym(f"tile_{name}", 1, 1, 1, "tile")
    index = Sym(f"{tile.name}_id", 0, max(n.value - 1, 0), 1, "index")
    sliced: dict[str, Value] = {}

    def one(v: Value) -> Value:
        return sliced.get(v.name, v)

    body: list[Op] = []
    for producer in chain:
        full = producer.results()[0]
        shape = (*full.shape[:axis], Const(1), *full.shape[axis + 1 :])
        new = rename(Value("", shape, full.dtype), f"{full.name}_slice")
        sliced[full.name] = new
        body.append(_sliced(producer, new, one, axis, index))
    part = one(x)
    init = rename(result, f"{result.name}_init")
    arg = rename(result, f"{result.name}_acc")
    nxt = rename(result, f"{result.name}_next")
    body.append(Elementwise(nxt, REDUCE_COMBINE[op], (arg, part), line))
    loop = ForLoop(tile, index, Const(0), n, tuple(body), (Carried(init, arg, nxt, result),), line)
    superseded = frozenset(p.results()[0].name for p in chain)
    fill = reduce_identity(op, result.dtype)
    return LeadingLoop((Full(init, fill, line), loop), result, superseded)


def store_leading(
    scope_ops: list[Op],
    stores: Sequence[Store],
    axis: int,
    rename: Callable[[Value, str], Value],
) -> LeadingLoop:
    """One loop over the leading axis `axis` of the stores' windows (a constant extent n,
    the same window there: the halves of one joined value), storing each slice of the
    values, recomputed from their producers (each once), into its slice."""
    xs = [s.value for s in stores]
    n = xs[0].shape[axis]
    assert isinstance(n, Const)
    chain = _chain(scope_ops, xs, axis, n)
    name = f"{stores[0].tensor}_d{axis}"
    tile = Sym(f"tile_{name}", 1, 1, 1, "tile")
    index = Sym(f"{tile.name}_id", 0, max(n.value - 1, 0), 1, "index")
    sliced: dict[str, Value] = {}
    body: list[Op] = []
    for producer in chain:
        full = producer.results()[0]
        shape = (*full.shape[:axis], Const(1), *full.shape[axis + 1 :])
        new = rename(Value("", shape, full.dtype), f"{full.name}_slice")
        body.append(_sliced(producer, new, lambda v: sliced.get(v.name, v), axis, index))
        sliced[full.name] = new
    for store in stores:
        window = (*store.window[:axis], Window(index, Const(1)), *store.window[axis + 1 :])
        value = sliced.get(store.value.name, store.value)
        body.append(dataclasses.replace(store, window=window, value=value))
    loop = ForLoop(tile, index, Const(0), n, tuple(body), (), stores[0].line)
    superseded = frozenset(p.results()[0].name for p in chain)
    return LeadingLoop((loop,), xs[0], superseded)


def _chain(scope_ops: list[Op], xs: Sequence[Value], axis: int, n: Const) -> list[Op]:
    """The ops of the current scope computing `xs` along the full axis, in order.

    Over an axis of extent 1 the one slice is the whole value, and a value broadcast
    along the axis (a keepdim mean, whose extent is 1 too) cannot be told from one
    along it: a producer that cannot be recomputed per slice (a reduction's loop, a
    value of an enclosing scope) is then read as it is instead of refused."""
    rank = xs[0].rank
    single = n == Const(1)

    def along(v: Value) -> bool:
        return v.rank == rank and v.shape[axis] == n

    need = {x.name for x in xs}
    chain: list[Op] = []
    for op in reversed(scope_ops):
        results = op.results()
        if not results or results[0].name not in need:
            continue
        recomputable = isinstance(op, Load | Elementwise | Convert | Full) and not (
            isinstance(op, Load) and op.window[axis] != Window(Const(0), n)
        )
        if not recomputable:
            if single:
                need.discard(results[0].name)
                continue
            raise LeadingAxisError(op)
        chain.append(op)
        need.update(v.name for v in op.operands() if along(v))
    if need - {o.results()[0].name for o in chain} and not single:  # outside this body
        raise LeadingAxisError(Reduce(xs[0], "sum", xs[0], axis))
    return chain[::-1]


def _sliced(op: Op, new: Value, one: Callable[[Value], Value], axis: int, index: Sym) -> Op:
    match op:
        case Load(window=window):
            w = (*window[:axis], Window(index, Const(1)), *window[axis + 1 :])
            return dataclasses.replace(op, result=new, window=w)
        case Elementwise(args=args):
            moved = tuple(one(a) if isinstance(a, Value) else a for a in args)
            return dataclasses.replace(op, result=new, args=moved)
        case Convert(operand=v):
            return dataclasses.replace(op, result=new, operand=one(v))
        case Full():
            return dataclasses.replace(op, result=new)
    raise LeadingAxisError(op)


_PURE = (Load, Elementwise, Convert, Full, ExpandDims, Reduce)


def drop_dead(ops: tuple[Op, ...], candidates: set[str]) -> tuple[Op, ...]:
    """Remove the ops among `candidates` (by result name) that nothing reads, until
    none is left: the full-extent producers a leading-axis loop replaced."""
    if not candidates:
        return ops
    while True:
        used = {v.name for op in walk(ops) for v in op.operands()}
        used |= {c.next.name for op in walk(ops) if isinstance(op, ForLoop) for c in op.carried}
        dead = {
            op.results()[0].name
            for op in walk(ops)
            if isinstance(op, _PURE) and op.results()[0].name in candidates - used
        }
        if not dead:
            return ops
        ops = _without(ops, dead)


def _without(ops: tuple[Op, ...], dead: set[str]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, _PURE) and op.results()[0].name in dead:
            continue
        if isinstance(op, ForLoop | If):
            op = dataclasses.replace(op, body=_without(op.body, dead))
        out.append(op)
    return tuple(out)
