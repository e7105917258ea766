"""The wider Helion/torch surface, rewritten into the Tile IR's few primitives.

Each handler turns one aten op of a Helion device graph into Elementwise, Reduce,
ExpandDims or Full ops, so that every construct has a model cost and a TT-Lang lowering
without new IR: `mean` is a sum times 1/n, `var` two sums, `amin` a negated `amax`,
`torch.where(c, a, b)` is `c*a + (1-c)*b` over a 0/1 mask (finite fills only, so no
0 * inf arises), `x ** 2` a product, tanh-GELU its polynomial through `tanh`, and
`full_like`/`zeros_like`/`empty_like`/`new_*` a constant fill (Loom has no uninitialised
tiles: an empty tile reads as zeros), and `argmax`/`argmin` a max, a compare and a min
over an index vector.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from loom.errors import FrontendError
from loom.frontend.leading import LeadingAxisError, reduce_leading
from loom.ir.tile import Elementwise, ExpandDims, Full, Reduce, Value
from loom.symbolic import Const, Expr, Sym

if TYPE_CHECKING:
    from loom.frontend.helion_import import _Scope

aten = torch.ops.aten

try:  # Helion's own GELU ops (it rewrites F.gelu into them in some versions)
    from helion.language._gelu_tanh_approx import _gelu_erf as _GELU_ERF
    from helion.language._gelu_tanh_approx import _gelu_tanh_approx as _GELU_TANH
except ImportError:  # pragma: no cover - other Helion versions
    _GELU_ERF = _GELU_TANH = None

Operand = Value | float

_SIMPLE_UNARY = {
    aten.sigmoid.default: "sigmoid",
    aten.tanh.default: "tanh",
    aten.relu.default: "relu",
    aten.abs.default: "abs",
    aten.silu.default: "silu",
}
_COMPARE = {
    aten.gt.Tensor: ("gt", False),
    aten.gt.Scalar: ("gt", False),
    aten.lt.Tensor: ("lt", False),
    aten.lt.Scalar: ("lt", False),
    aten.ge.Tensor: ("lt", True),
    aten.ge.Scalar: ("lt", True),
    aten.le.Tensor: ("gt", True),
    aten.le.Scalar: ("gt", True),
}
"""Comparison -> (primitive, negate): `a >= b` is `1 - (a < b)`."""
_FILL_LIKE = {
    aten.full_like.default: 1,
    aten.zeros_like.default: None,
    aten.empty_like.default: None,
    aten.ones_like.default: None,
    aten.new_empty.default: None,
    aten.new_zeros.default: None,
    aten.new_ones.default: None,
    aten.new_full.default: 2,
    aten.full.default: 1,
    aten.zeros.default: None,
    aten.ones.default: None,
    aten.empty.memory_format: None,
}
_ONES = {aten.ones_like.default, aten.new_ones.default, aten.ones.default}
REDUCTIONS = {
    aten.amax.default: "max",
    aten.sum.dim_IntList: "sum",
    aten.mean.dim: "mean",
    aten.amin.default: "min",
    aten.var.correction: "var",
    aten.var.dim: "var",
}
UNSUPPORTED_HINTS = {
    aten.cumsum.default: ("cumsum", "scans are not supported; use a row reduction (sum)"),
    aten.sort.default: ("sort", "sorting is not supported on the tile engines"),
    aten.topk.default: ("topk", "top-k selection is not supported on the tile engines"),
    aten.index.Tensor: (
        "tensor-indexed gather",
        "index with tiles or `:` only (data-dependent indices are not supported)",
    ),
}


@dataclass(frozen=True)
class LocalIndex:
    """argmax/argmin over the tile of a looped dim: `value` holds the index in the
    tensor, which is the result plus the tile's `begin`; the handler of `+` takes it."""

    value: Value
    begin: Expr
    what: str


def _broadcast(result: Value, *args: Operand) -> Value:
    """The shape numpy broadcasting gives `args` (a step of a rewrite keeps a mask's
    vector shape until it meets a full tile), in the dtype of `result`."""
    values = [a for a in args if isinstance(a, Value)]
    rank = max(v.rank for v in values)
    shape = []
    for i in range(rank):
        dims = [v.shape[i - rank + v.rank] for v in values if i - rank + v.rank >= 0]
        sized = [d for d in dims if d != Const(1)]
        shape.append(sized[0] if sized else Const(1))
    return Value("", tuple(shape), result.dtype)


class SurfaceOps:
    """Mixin of HelionImporter: handlers for the ops listed above."""

    # provided by HelionImporter
    _new_value: Callable[..., Value]
    _emit: Callable[..., Value | None]
    _unsupported: Callable[..., None]
    _operand: Callable[..., Operand]
    _renamed: Callable[[Value, str], Value]
    _span_index: Callable[[_Scope, int, int], Value]
    index_values: set[str]
    index_loads: dict[str, int]
    superseded: set[str]
    source_file: str
    name: str
    _index_column: Callable[..., Value | None]
    _argreduce_block: Callable[[Expr], tuple[int, int, Expr] | None]
    _tile_indices: Callable[[_Scope, int, bool, int], Value]

    def surface_handlers(self) -> dict[object, Callable[[torch.fx.Node, _Scope], object]]:
        table: dict[object, Callable[[torch.fx.Node, _Scope], object]] = {}
        for target in _SIMPLE_UNARY:
            table[target] = self._simple_unary
        for target in _COMPARE:
            table[target] = self._compare
        for target in _FILL_LIKE:
            table[target] = self._fill_like
        for target in REDUCTIONS:
            table[target] = self._reduction
        table[aten.gelu.default] = self._gelu
        table[aten.argmax.default] = self._argreduce
        table[aten.argmin.default] = self._argreduce
        table[aten.var_mean.correction] = self._var_mean
        table[aten.scalar_tensor.default] = self._scalar_tensor
        if _GELU_TANH is not None:
            table[_GELU_TANH] = self._gelu
            table[_GELU_ERF] = self._gelu
        table[aten.pow.Tensor_Scalar] = self._pow
        table[aten.square.default] = self._square
        table[aten.where.self] = self._where
        table[aten.rsub.Scalar] = self._rsub
        table[aten.clone.default] = self._identity
        table[aten.alias.default] = self._identity
        table[aten.clamp_min.default] = self._clamp_min
        table[aten.clamp_max.default] = self._clamp_max
        table[aten.clamp.default] = self._clamp
        table[aten.unsqueeze.default] = self._unsqueeze
        for name, (what, hint) in UNSUPPORTED_HINTS.items():
            table[name] = self._rejecter(what, hint)
        return table

    # ----- helpers -----------------------------------------------------------------
    def _temp(self, like: Value, base: str) -> Value:
        """A fresh value shaped like `like` (a step of a rewrite)."""
        return self._renamed(like, base)

    def _ew(
        self, scope: _Scope, op: str, args: Sequence[Operand], like: Value, line: int, name: str
    ) -> Value:
        result = self._temp(like, name)
        self._emit(scope, Elementwise(result, op, tuple(args), line))
        return result

    def _line(self, node: torch.fx.Node) -> int:
        from loom.frontend.helion_import import _line

        return _line(node)

    def _rejecter(self, what: str, hint: str) -> Callable[[torch.fx.Node, _Scope], object]:
        def reject(node: torch.fx.Node, scope: _Scope) -> object:
            self._unsupported(node, what, hint)
            return None

        return reject

    # ----- elementwise ---------------------------------------------------------------
    def _simple_unary(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        op = _SIMPLE_UNARY[node.target]  # type: ignore[index]
        return self._emit(scope, Elementwise(self._new_value(node), op, (x,), self._line(node)))

    def _scalar_tensor(self, node: torch.fx.Node, scope: _Scope) -> float:
        """`torch.where(c, x, 0.0)` wraps the 0.0 in a 0-d tensor: keep it a constant."""
        return self._number(scope, node.args[0], node)

    def _identity(self, node: torch.fx.Node, scope: _Scope) -> object:
        return self._operand(scope, node.args[0], node)

    def _gelu(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        line = self._line(node)
        if node.kwargs.get("approximate", "none") == "none" and node.target is not _GELU_TANH:
            return self._emit(scope, Elementwise(self._new_value(node), "gelu", (x,), line))
        assert isinstance(x, Value)
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x2 = self._ew(scope, "mul", (x, x), x, line, "gelu_x2")
        x3 = self._ew(scope, "mul", (x2, x), x, line, "gelu_x3")
        inner = self._ew(scope, "mul", (x3, 0.044715), x, line, "gelu_c")
        inner = self._ew(scope, "add", (x, inner), x, line, "gelu_in")
        inner = self._ew(scope, "mul", (inner, math.sqrt(2.0 / math.pi)), x, line, "gelu_s")
        th = self._ew(scope, "tanh", (inner,), x, line, "gelu_t")
        th = self._ew(scope, "add", (th, 1.0), x, line, "gelu_1p")
        half = self._ew(scope, "mul", (x, 0.5), x, line, "gelu_h")
        return self._emit(scope, Elementwise(self._new_value(node), "mul", (half, th), line))

    def _pow(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        p = node.args[1]
        line = self._line(node)
        result = self._new_value(node)
        if not isinstance(x, Value) or not isinstance(p, int | float):
            self._unsupported(node, "pow with a tensor exponent", "raise to a constant power")
            return None
        if p == 0.5:
            return self._emit(scope, Elementwise(result, "sqrt", (x,), line))
        if p == -0.5:
            return self._emit(scope, Elementwise(result, "rsqrt", (x,), line))
        if p == -1:
            return self._emit(scope, Elementwise(result, "recip", (x,), line))
        if float(p).is_integer() and 1 <= p <= 8:
            acc: Value = x
            for _ in range(int(p) - 2):
                acc = self._ew(scope, "mul", (acc, x), x, line, "pow_acc")
            if p == 1:
                return self._emit(scope, Elementwise(result, "mul", (x, 1.0), line))
            return self._emit(scope, Elementwise(result, "mul", (acc, x), line))
        self._unsupported(
            node,
            f"pow by {p}",
            "raise to an integer power 1..8, 0.5, -0.5 or -1 (or write exp(p * log(x)))",
        )
        return None

    def _square(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        return self._emit(
            scope, Elementwise(self._new_value(node), "mul", (x, x), self._line(node))
        )

    def _rsub(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        other = self._number(scope, node.args[1], node)
        line = self._line(node)
        return self._emit(scope, Elementwise(self._new_value(node), "sub", (other, x), line))

    def _compare(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        op, negate = _COMPARE[node.target]  # type: ignore[index]
        args = list(node.args[:2])
        if (args[0] is None) != (args[1] is None):
            # Helion traces `x > x` as gt(x, None), as it does `x * x`: one tensor twice
            args = [args[0] if args[0] is not None else args[1]] * 2
        a = self._operand(scope, args[0], node)
        b = self._operand(scope, args[1], node)
        line = self._line(node)
        result = self._new_value(node, node.name)
        result = Value(result.name, result.shape, "fp32")
        if not negate:
            return self._emit(scope, Elementwise(result, op, (a, b), line))
        like = a if isinstance(a, Value) else b
        assert isinstance(like, Value)
        mask = self._ew(scope, op, (a, b), Value("", result.shape, "fp32"), line, "cmp")
        return self._emit(scope, Elementwise(result, "sub", (1.0, mask), line))

    def _where(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        cond = self._operand(scope, node.args[0], node)
        a = self._operand(scope, node.args[1], node)
        b = self._operand(scope, node.args[2], node)
        line = self._line(node)
        result = self._new_value(node)
        if not isinstance(cond, Value):
            self._unsupported(node, "torch.where with a constant condition", "use the branch")
            return None
        take_a = self._ew(scope, "mul", (cond, a), _broadcast(result, cond, a), line, "where_a")
        inverse = self._ew(scope, "sub", (1.0, cond), cond, line, "where_not")
        like_b = _broadcast(result, inverse, b)
        take_b = self._ew(scope, "mul", (inverse, b), like_b, line, "where_b")
        return self._emit(scope, Elementwise(result, "add", (take_a, take_b), line))

    def _number(self, scope: _Scope, arg: object, node: torch.fx.Node) -> float:
        value = self._operand(scope, arg, node)
        if not isinstance(value, float):
            self._unsupported(node, f"{node.target} with a tensor bound", "use constant bounds")
        return value  # type: ignore[return-value]

    def _clamp_min(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        lo = self._number(scope, node.args[1], node)
        return self._emit(
            scope, Elementwise(self._new_value(node), "maximum", (x, lo), self._line(node))
        )

    def _clamp_max(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        hi = self._number(scope, node.args[1], node)
        return self._emit(
            scope, Elementwise(self._new_value(node), "minimum", (x, hi), self._line(node))
        )

    def _clamp(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
        hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
        line = self._line(node)
        assert isinstance(x, Value)
        if lo is not None and hi is not None:
            low = self._number(scope, lo, node)
            x = self._ew(scope, "maximum", (x, low), x, line, "clamp_lo")
            high = self._number(scope, hi, node)
            return self._emit(scope, Elementwise(self._new_value(node), "minimum", (x, high), line))
        op, bound = ("maximum", lo) if lo is not None else ("minimum", hi)
        limit = self._number(scope, bound, node)
        return self._emit(scope, Elementwise(self._new_value(node), op, (x, limit), line))

    def _unsqueeze(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        assert isinstance(x, Value)
        dim = node.args[1]
        assert isinstance(dim, int)
        axis = dim % (x.rank + 1)
        bid = self.index_loads.get(x.name)
        if bid is not None and x.rank == 1 and axis == 1:
            return self._index_column(bid, node, scope)
        return self._emit(scope, ExpandDims(self._new_value(node), x, axis, self._line(node)))

    # ----- creation ---------------------------------------------------------------------
    def _fill_like(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        pos = _FILL_LIKE[node.target]  # type: ignore[index]
        fill = 1.0 if node.target in _ONES else 0.0
        if pos is not None:
            raw = node.args[pos] if len(node.args) > pos else node.kwargs.get("fill_value", 0.0)
            value = scope.values.get(raw, raw) if isinstance(raw, torch.fx.Node) else raw
            if not isinstance(value, int | float):
                self._unsupported(node, "a fill with a tensor value", "fill with a constant")
            fill = float(value)  # type: ignore[arg-type]
        return self._emit(scope, Full(self._new_value(node), fill, self._line(node)))

    # ----- reductions -----------------------------------------------------------------
    def _reduction(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        kind = REDUCTIONS[node.target]  # type: ignore[index]
        x = self._operand(scope, node.args[0], node)
        if not isinstance(x, Value):
            self._unsupported(node, f"{kind} of a constant", "reduce a tile")
            return None
        dims: Any = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        if isinstance(dims, int):
            dims = [dims]
        keepdim = bool(
            node.kwargs.get(
                "keepdim", node.args[2] if len(node.args) > 2 and kind != "var" else False
            )
        )
        if kind == "var":
            keepdim = bool(node.kwargs.get("keepdim", False))
        if not isinstance(dims, list | tuple) or len(dims) != 1:
            self._unsupported(
                node,
                f"{node.target} over dims {dims}",
                "reduce over one dimension at a time (e.g. x.sum(-1))",
            )
            return None
        axis = int(dims[0]) % x.rank
        line = self._line(node)
        if x.dtype == "int32" and node.meta["val"].dtype != torch.int32:
            self._unsupported(
                node,
                f"{kind} of an int32 tile into {node.meta['val'].dtype}",
                "keep the result int32 (`x.sum(-1, dtype=torch.int32)`; torch widens an "
                "integer sum to int64, and there are no 64-bit integer tiles) or reduce "
                "`x.float()`",
            )
            return None
        result = self._new_value(node)
        reduced = Value("", tuple(d for i, d in enumerate(x.shape) if i != axis), result.dtype)
        n = x.shape[axis]
        if n == Const(1) and axis >= x.rank - 2:  # a leading axis loops (trip count 1)
            return self._reduce_unit_axis(node, scope, kind, x, keepdim, result)
        if kind in ("mean", "var") and not isinstance(n, Const):
            self._unsupported(
                node,
                f"{kind} over a tiled dimension",
                f"{kind} over a full-row slice x[tile, :], or sum in a loop and divide by n",
            )
            return None
        if kind == "max" or kind == "sum":
            out = self._reduce_into(scope, kind, x, axis, reduced, line, result, keepdim)
        elif kind == "min":
            neg = self._ew(scope, "neg", (x,), x, line, "amin_neg")
            mx = self._reduce_into(scope, "max", neg, axis, reduced, line, None, keepdim)
            out = self._finish(scope, "neg", (mx,), line, result)
        elif kind == "mean":
            assert isinstance(n, Const)
            total = self._reduce_into(scope, "sum", x, axis, reduced, line, None, keepdim)
            out = self._finish(scope, "mul", (total, 1.0 / n.value), line, result)
        else:
            out = self._variance(node, scope, x, axis, reduced, line, result, keepdim)
        return out

    def _reduce_unit_axis(
        self, node: torch.fx.Node, scope: _Scope, kind: str, x: Value, keepdim: bool, result: Value
    ) -> Value | None:
        """A reduction over an axis of extent 1 (`v[None, :].sum(0, keepdim=True)`) is the
        value itself. Loom's tiles have no axis of extent 1 of their own (a row fills row 0
        of its tiles, the rest is padding), so it is never reduced as a tile axis, which
        would fold the padding in: with keepdim it is a copy, otherwise it is refused."""
        if keepdim and kind in ("sum", "max", "min", "mean"):
            return self._finish(scope, "mul", (x, 1.0), self._line(node), result)
        self._unsupported(
            node,
            f"{kind} over an axis of extent 1 (a broadcast `[None, :]`/`[:, None]` or a "
            "keepdim result)" + ("" if keepdim else " without keepdim=True"),
            "over one element the reduction is the value itself: drop it, or reduce the full "
            "slice before broadcasting",
        )
        return None

    def _argreduce(self, node: torch.fx.Node, scope: _Scope) -> object:
        """`argmax`/`argmin` over n elements: the smallest index where the value equals
        the extreme, `min(idx + n * (x < max))`, every step in fp32 so the indices are
        exact integers. Over a full slice the indices 0..n-1 come from an index vector;
        over a tile of a looped dim (`x[tile_m, tile_n].argmax(-1)` inside a loop over
        tile_n) they are the tile's own indices in the tensor, and the result is the
        index within the tile, which Loom compiles as `... + tile_n.begin` (the running
        (max, index) pair of a looped argmax, carried by the user's `torch.where`)."""
        is_max = node.target == aten.argmax.default
        what = "argmax" if is_max else "argmin"
        x = self._operand(scope, node.args[0], node)
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        keepdim = bool(node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False))
        if not isinstance(x, Value) or not isinstance(dim, int):
            self._unsupported(node, f"{what} without a dim", f"{what} over one dim (dim=-1)")
            return None
        axis = dim % x.rank
        n = x.shape[axis]
        line = self._line(node)
        tiled = self._argreduce_block(n) if not isinstance(n, Const) else None
        if (not isinstance(n, Const) and tiled is None) or axis < x.rank - 2:
            where = "a leading axis" if axis < x.rank - 2 else "a dim tiled by the grid"
            self._unsupported(
                node,
                f"{what} over {where}",
                f"{what} over a full slice `x[tile, :]` (or `x[:, tile]`) along one of the "
                "last two axes, or over the tile of an inner loop along it, offset by the "
                f"tile's begin (`x[tile_m, tile_n].{what}(-1) + tile_n.begin`) and carried "
                "as a running (value, index) pair",
            )
            return None
        like = Value("", x.shape, "fp32")
        reduced = Value("", tuple(d for i, d in enumerate(x.shape) if i != axis), "fp32")
        xs = x if is_max else self._ew(scope, "neg", (x,), like, line, f"{what}_neg")
        peak = self._reduce_into(scope, "max", xs, axis, reduced, line, None, True)
        below = self._ew(scope, "lt", (xs, peak), like, line, f"{what}_miss")
        if tiled is None:
            assert isinstance(n, Const)
            span = n.value
            idx = self._span_index(scope, span, line)
        else:
            span = tiled[1]
            idx = self._tile_indices(scope, tiled[0], axis == x.rank - 2, line)
        if tiled is None and axis == x.rank - 2:  # indices down the rows: a column
            column = self._temp(Value("", (n, Const(1)), "fp32"), f"{idx.name}_col")
            self._emit(scope, ExpandDims(column, idx, 1, line))
            idx = column
        away = self._ew(scope, "mul", (below, float(span)), like, line, f"{what}_away")
        cand = self._ew(scope, "add", (idx, away), like, line, f"{what}_cand")
        flip = self._ew(scope, "neg", (cand,), like, line, f"{what}_flip")
        first = self._reduce_into(scope, "max", flip, axis, reduced, line, None, keepdim)
        result = self._renamed(Value("", first.shape, "fp32"), node.name)
        self.index_values.add(result.name)
        found = self._finish(scope, "neg", (first,), line, result)
        if tiled is None:
            return found
        return LocalIndex(found, tiled[2], what)

    def _reduce_into(
        self,
        scope: _Scope,
        op: str,
        x: Value,
        axis: int,
        reduced: Value,
        line: int,
        result: Value | None,
        keepdim: bool,
    ) -> Value:
        if axis < x.rank - 2 and isinstance(x.shape[axis], Const | Sym):
            # (a split reduction's gathered partials, counted by ceildiv(extent, tile),
            # fold over their leading axis on the owner: a plain Reduce)
            return self._reduce_leading(scope, op, x, axis, reduced, line, result, keepdim)
        if not keepdim:
            target = result or self._temp(reduced, f"{op}_red")
            self._emit(scope, Reduce(target, op, x, axis, line))
            return target
        flat = self._temp(reduced, f"{op}_red")
        self._emit(scope, Reduce(flat, op, x, axis, line))
        kept = result or self._temp(
            Value("", (*reduced.shape[:axis], Const(1), *reduced.shape[axis:]), reduced.dtype),
            f"{op}_keep",
        )
        self._emit(scope, ExpandDims(kept, flat, axis, line))
        return kept

    def _reduce_leading(
        self,
        scope: _Scope,
        op: str,
        x: Value,
        axis: int,
        reduced: Value,
        line: int,
        result: Value | None,
        keepdim: bool,
    ) -> Value:
        """A reduction over a leading axis (not one of a tile's two): a loop over its
        slices folding each into an accumulator (see loom.frontend.leading)."""
        kept = (*reduced.shape[:axis], Const(1), *reduced.shape[axis:])
        shape = kept if keepdim else reduced.shape
        target = result or self._temp(Value("", shape, reduced.dtype), f"{op}_red")
        problem = ""
        if not isinstance(x.shape[axis], Const):
            problem = f"the axis is tiled ({x.shape[axis]}), not a full slice `:`"
        else:
            try:
                loop = reduce_leading(scope.ops, op, x, axis, target, self._renamed, line)
            except LeadingAxisError as err:
                problem = (
                    f"the reduced value is computed by a {type(err.op).__name__} (Loom "
                    "recomputes loads, elementwise ops, conversions and fills per slice)"
                )
            else:
                scope.ops.extend(loop.ops)
                self.superseded.update(loop.superseded)
                return loop.result
        raise FrontendError(
            f"{self.source_file}:{line}: Loom cannot compile the {op} over axis {axis} of a "
            f"rank-{x.rank} value in kernel {self.name!r}: {problem}. A reduction over a "
            "leading axis (not one of the last two) is a loop over its slices, so reduce a "
            "full slice `x[:, tile_m, tile_n]` of a loaded tensor, or elementwise results "
            "of such slices, in the same loop body."
        )

    def _finish(
        self, scope: _Scope, op: str, args: tuple[Operand, ...], line: int, result: Value
    ) -> Value:
        self._emit(scope, Elementwise(result, op, args, line))
        return result

    def _variance(
        self,
        node: torch.fx.Node,
        scope: _Scope,
        x: Value,
        axis: int,
        reduced: Value,
        line: int,
        result: Value,
        keepdim: bool,
    ) -> Value:
        n = x.shape[axis]
        assert isinstance(n, Const)
        given = node.kwargs.get("correction", 1)
        if node.target == aten.var.dim:
            unbiased = node.args[2] if len(node.args) > 2 else node.kwargs.get("unbiased", True)
            given = 1 if unbiased else 0
        if given is None:
            given = 1
        assert isinstance(given, int | float)
        correction = float(given)
        if n.value - correction <= 0:
            self._unsupported(node, "var over a single element", "reduce over more elements")
        total = self._reduce_into(scope, "sum", x, axis, reduced, line, None, True)
        mean = self._ew(scope, "mul", (total, 1.0 / n.value), total, line, "var_mean")
        diff = self._ew(scope, "sub", (x, mean), x, line, "var_diff")
        sq = self._ew(scope, "mul", (diff, diff), x, line, "var_sq")
        ss = self._reduce_into(scope, "sum", sq, axis, reduced, line, None, keepdim)
        return self._finish(scope, "mul", (ss, 1.0 / (n.value - correction)), line, result)

    def _var_mean(self, node: torch.fx.Node, scope: _Scope) -> list[Value] | None:
        """`torch.var_mean`: the variance as `var` does, the mean as a sum times 1/n."""
        x = self._operand(scope, node.args[0], node)
        dims: Any = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        dims = [dims] if isinstance(dims, int) else dims
        if not isinstance(x, Value) or not isinstance(dims, list | tuple) or len(dims) != 1:
            self._unsupported(node, "var_mean over several dims", "reduce over one dimension")
            return None
        axis = int(dims[0]) % x.rank
        n = x.shape[axis]
        if not isinstance(n, Const):
            self._unsupported(
                node, "var_mean over a tiled dimension", "use a full-row slice x[tile, :]"
            )
            return None
        keepdim = bool(node.kwargs.get("keepdim", False))
        kept = (*x.shape[:axis], Const(1), *x.shape[axis + 1 :])
        flat = tuple(d for i, d in enumerate(x.shape) if i != axis)
        shape = kept if keepdim else flat
        line = self._line(node)
        reduced = Value("", flat, x.dtype)
        var = self._temp(Value("", shape, x.dtype), f"{node.name}_var")
        self._variance(node, scope, x, axis, reduced, line, var, keepdim)
        total = self._reduce_into(scope, "sum", x, axis, reduced, line, None, keepdim)
        mean = self._temp(Value("", shape, x.dtype), f"{node.name}_mean")
        self._finish(scope, "mul", (total, 1.0 / n.value), line, mean)
        return [var, mean]
