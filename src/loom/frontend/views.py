"""Views of a tile that split its last dim in halves or merge halves back, as rotary
embeddings write them (Helion's `rope.py`):

    x.reshape([tile_b, tile_t, 2, half]).permute(0, 1, 3, 2)  ->  hl.split  ->  x1, x2
    hl.join(y1, y2).permute(0, 1, 3, 2).reshape([tile_b, tile_t, 2 * half])

A tile holds 32x32 blocks of its last two dims, so no tile op reshapes them. The halves
of a value are computed instead: each half recomputes the value's producers (loads,
conversions, elementwise ops, fills) on its half of the last dim, the loads reading the
half's window; the full-width producers become dead. Joined halves stay separate values
(`Joined`) that a store writes into the two halves of its window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from helion.language import view_ops

from loom.frontend.core import DTYPES, ImporterCore
from loom.frontend.scope import Handler, Joined, Scope, node_line, seq_arg
from loom.ir.geometry import TILE
from loom.ir.tile import Convert, Elementwise, ExpandDims, Full, Load, Op, Value, Window
from loom.symbolic import Const, Expr

aten = torch.ops.aten
prims = torch.ops.prims

_HINT = (
    "split the last dim in halves (`x.reshape([..., 2, d // 2]).permute(..., -1, -2)` "
    "then `hl.split`) or merge two halves back (`hl.join(a, b).permute(..., -1, -2)"
    ".reshape([..., d])`) into a store; other views of a tile are not supported, as a "
    "tile holds 32x32 blocks of its last two dims"
)


@dataclass(frozen=True)
class Halves:
    """A value whose last dim is seen as a pair axis of 2 and a half of it: `source`
    (a view of a computed value) or `parts` (two halves, `hl.join`); `pair_last` when
    the pair axis is the last (after the permute `hl.split` and `hl.join` see)."""

    source: Value | None
    parts: tuple[Value, Value] | None
    pair_last: bool


def _dims(shape: tuple[Expr, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


class ViewOps(ImporterCore):
    """`view`/`reshape`, `permute`, `hl.split` and `hl.join` over a last dim in halves."""

    def view_handlers(self, table: dict[object, Handler]) -> dict[object, Handler]:
        """The handlers of view ops; `permute`, `clone` and `.to()` of a value that is not
        a view of halves fall back to `table`'s."""
        permute, clone = table[aten.permute.default], table[aten.clone.default]
        convert = table[prims.convert_element_type.default]
        return {
            aten.view.default: self._view,
            aten.reshape.default: self._view,
            view_ops.split: self._split,
            view_ops.join: self._join,
            aten.permute.default: lambda n, s: self._permute_halves(n, s, permute),
            aten.clone.default: lambda n, s: self._marker(n, s) or clone(n, s),
            prims.convert_element_type.default: lambda n, s: self._convert_parts(n, s, convert),
        }

    def _marker(self, node: torch.fx.Node, scope: Scope) -> Halves | Joined | None:
        arg = node.args[0]
        found = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else None
        return found if isinstance(found, Halves | Joined) else None

    def _view(self, node: torch.fx.Node, scope: Scope) -> object:
        shape = tuple(self._dim(d, node) for d in node.meta["val"].shape)
        marker = self._marker(node, scope)
        if isinstance(marker, Halves) and marker.parts and not marker.pair_last:
            a, b = marker.parts
            if shape == (*a.shape[:-1], a.shape[-1] + b.shape[-1]):
                return Joined(marker.parts)
        if marker is not None:
            self._unsupported(node, f"a view of a pair of halves as {_dims(shape)}", _HINT)
        x = self._value(scope, node.args[0], node)
        if shape == x.shape:
            return x
        last = x.shape[-1]
        if isinstance(last, Const) and shape == (*x.shape[:-1], Const(2), Const(last.value // 2)):
            return Halves(x, None, False)
        self._unsupported(node, f"a view of a {_dims(x.shape)} tile as {_dims(shape)}", _HINT)

    def _permute_halves(self, node: torch.fx.Node, scope: Scope, fallback: Handler) -> object:
        marker = self._marker(node, scope)
        if marker is None:
            return fallback(node, scope)
        perm = list(seq_arg(node, 1))
        swapped = list(range(len(perm)))
        swapped[-2:] = swapped[-1], swapped[-2]
        if not isinstance(marker, Halves) or perm != swapped:
            self._unsupported(node, f"permute {perm} of a pair of halves", _HINT)
        return replace(marker, pair_last=not marker.pair_last)

    def _split(self, node: torch.fx.Node, scope: Scope) -> tuple[Value, Value]:
        marker = self._marker(node, scope)
        if not isinstance(marker, Halves) or not marker.pair_last:
            self._unsupported(node, "hl.split of a value not viewed as halves", _HINT)
        if marker.parts is not None:
            return marker.parts
        assert marker.source is not None
        last = marker.source.shape[-1]
        assert isinstance(last, Const)
        half = last.value // 2
        if half % TILE:
            self._unsupported(
                node,
                f"hl.split of a last dim of {last.value} in halves of {half}",
                f"each half must be whole {TILE}x{TILE} tiles (a dim a multiple of "
                f"{2 * TILE}), as Loom reads whole tiles",
            )
        return (
            self._part(node, scope, marker.source, Const(0), half),
            self._part(node, scope, marker.source, Const(half), half),
        )

    def _join(self, node: torch.fx.Node, scope: Scope) -> Halves:
        a = self._value(scope, node.args[0], node)
        b = self._value(scope, node.args[1], node)
        return Halves(None, (a, b), True)

    def _convert_parts(self, node: torch.fx.Node, scope: Scope, fallback: Handler) -> object:
        marker = self._marker(node, scope)
        if marker is None:
            return fallback(node, scope)
        dtype = node.meta["val"].dtype
        if not isinstance(marker, Joined) or dtype not in DTYPES:
            self._unsupported(node, f".to({dtype}) of a view of halves", _HINT)
        return Joined(
            tuple(self._cast(scope, p, DTYPES[dtype], node_line(node)) for p in marker.parts)
        )

    def _part(self, node: torch.fx.Node, scope: Scope, x: Value, begin: Expr, size: int) -> Value:
        """The elements [begin, begin + size) of `x`'s last dim, recomputed from its
        producers in this loop body (the loads read that window; a broadcast row or
        column is narrowed with its operand)."""
        op = next((o for o in reversed(scope.ops) if x in o.results()), None)
        width = x.shape[-1]
        shape = (*x.shape[:-1], Const(size))
        part = self._renamed(Value("", shape, x.dtype), f"{x.name}_{begin}")
        self.superseded.add(x.name)

        def narrowed(v: Value) -> Value:
            return self._part(node, scope, v, begin, size) if v.shape[-1] == width else v

        new: Op
        match op:
            case Load(window=window):
                last = window[-1]
                half = Window(last.offset + begin, Const(size))
                new = replace(op, result=part, window=(*window[:-1], half))
            case Convert(operand=v):
                new = replace(op, result=part, operand=narrowed(v))
            case Elementwise(args=args):
                moved = tuple(narrowed(a) if isinstance(a, Value) else a for a in args)
                new = replace(op, result=part, args=moved)
            case Full():
                new = replace(op, result=part)
            case ExpandDims(operand=v, axis=axis) if axis < x.rank - 1:
                new = replace(op, result=part, operand=narrowed(v))
            case _:
                what = "outside this loop body" if op is None else f"by {type(op).__name__}"
                self._unsupported(node, f"hl.split of a value computed {what}", _HINT)
        scope.ops.append(new)
        return part
