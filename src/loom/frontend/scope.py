"""What the frontend's converters hand each other: the values of the FX graph being
converted (`Scope`), typed access to FX node arguments, and what a converter returns for
a looped argmax (`LocalIndex`) or raises for phases that need a grid-wide barrier
(`GridBarrierNeeded`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import torch

from loom.ir.tile import Op, Value
from loom.symbolic import Expr

Operand = Value | float


@dataclass
class Scope:
    """Values of one FX graph being converted, and the ops emitted so far."""

    values: dict[torch.fx.Node, object] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)


Handler = Callable[[torch.fx.Node, Scope], object]
"""The converter of one FX node target (an entry of the importer's handler table)."""


@dataclass(frozen=True)
class LocalIndex:
    """argmax/argmin over the tile of a looped dim: `value` holds the index in the
    tensor, which is the result plus the tile's `begin`; the handler of `+` takes it."""

    value: Value
    begin: Expr
    what: str


@dataclass(frozen=True)
class RowTotal:
    """The sum of every element of a 1-D value (`valid.to(torch.int32).sum()`, a 0-d
    tensor): a tile holds no 0-d value, so each elementwise op that uses it takes it in
    the shape of its result, as a row reduction of the vector broadcast down that many
    rows (see `loom.frontend.reductions`)."""

    row: Value
    line: int


@dataclass(frozen=True)
class Joined:
    """Values laid side by side along the last dim (`hl.join(a, b)` viewed back to one
    dim, rope's halves): no tile op concatenates, so a store writes each part into its
    own slice of the window, and `.to(dtype)` converts each (see `loom.frontend.views`)."""

    parts: tuple[Value, ...]


class GridBarrierNeeded(Exception):
    """The phases cannot run in order on each core: a later phase reads tiles other
    blocks wrote, overwrites tiles other blocks read, or runs on another grid. The
    importer is then run once per phase (one launch each, a grid-wide barrier between)."""


@dataclass(frozen=True)
class _NodeView:
    """An FX node seen with its `None` placeholders filled from `_extra_args` (Helion
    passes an op's inputs that way when Inductor lowers it into several buffers)."""

    target: object
    args: tuple[object, ...]
    kwargs: dict[str, object]
    meta: dict[str, object]
    name: str
    users: dict[object, None]


def with_extra_inputs(node: torch.fx.Node) -> torch.fx.Node:
    inputs: list[object] = []
    extras = node.kwargs["_extra_args"]
    for extra in extras if isinstance(extras, list | tuple) else ():
        if isinstance(extra, torch.fx.Node):
            inputs.extend(seq_arg(extra, 0))
    feed = iter(inputs)
    args = tuple(next(feed, None) if a is None else a for a in node.args)
    kwargs: dict[str, object] = {k: v for k, v in node.kwargs.items() if k != "_extra_args"}
    users: dict[object, None] = dict.fromkeys(node.users)
    view = _NodeView(node.target, args, kwargs, node.meta, node.name, users)
    # The handlers read only target/args/kwargs/meta/name/users, which the view has: it
    # stands in for the FX node it was made from.
    return cast("torch.fx.Node", view)


# FX types a node's arguments as one wide union (`torch.fx.node.Argument`); what each
# position holds is fixed by the Helion op the node calls. These accessors check it, so
# a Helion release that changes an op's signature fails here with a clear internal error.
def node_arg(node: torch.fx.Node, i: int) -> torch.fx.Node:
    arg = node.args[i]
    if not isinstance(arg, torch.fx.Node):
        raise TypeError(f"{node.target}: argument {i} is {arg!r}, not an FX node")
    return arg


def seq_arg(node: torch.fx.Node, i: int) -> Sequence[object]:
    arg = node.args[i]
    if not isinstance(arg, list | tuple):
        raise TypeError(f"{node.target}: argument {i} is {arg!r}, not a list")
    return arg


def int_arg(node: torch.fx.Node, i: int) -> int:
    arg = node.args[i]
    if not isinstance(arg, int) or isinstance(arg, bool):
        raise TypeError(f"{node.target}: argument {i} is {arg!r}, not an integer")
    return arg


def as_node(arg: object) -> torch.fx.Node:
    if not isinstance(arg, torch.fx.Node):
        raise TypeError(f"{arg!r} is not an FX node")
    return arg


def node_line(node: torch.fx.Node) -> int:
    match = re.search(r":(\d+)$", str(node.meta.get("location", "")))
    return int(match.group(1)) if match else 0
