"""Reductions, rewritten into the Tile IR's Reduce, Elementwise and ExpandDims ops: `mean`
is a sum times 1/n, `var` two sums, `amin` a negated `amax`, `argmax`/`argmin` a max, a
compare and a min over an index vector, and a reduction over a leading axis a loop over
its slices (see `loom.frontend.leading`).
"""

from __future__ import annotations

from typing import Any

import torch

from loom.errors import FrontendError
from loom.frontend.indices import IndexOps
from loom.frontend.leading import LeadingAxisError, reduce_leading
from loom.frontend.scope import Handler, LocalIndex, Operand, RowTotal, Scope, node_line
from loom.ir.tile import Elementwise, ExpandDims, Reduce, Value
from loom.symbolic import Const, Sym

aten = torch.ops.aten

REDUCTIONS = {
    aten.amax.default: "max",
    aten.sum.dim_IntList: "sum",
    aten.mean.dim: "mean",
    aten.amin.default: "min",
    aten.var.correction: "var",
    aten.var.dim: "var",
}


class ReductionOps(IndexOps):
    """sum, mean, amax, amin, var, var_mean, argmax and argmin over one axis."""

    def reduction_handlers(self) -> dict[object, Handler]:
        table: dict[object, Handler] = {}
        for target in REDUCTIONS:
            table[target] = self._reduction
        table[aten.argmax.default] = self._argreduce
        table[aten.argmin.default] = self._argreduce
        table[aten.var_mean.correction] = self._var_mean
        table[aten.sum.default] = self._total
        return table

    def _total(self, node: torch.fx.Node, scope: Scope) -> RowTotal:
        """`v.sum()` of a 1-D value: every element, a 0-d tensor (see `RowTotal`)."""
        x = self._operand(scope, node.args[0], node)
        if not isinstance(x, Value) or x.rank != 1 or node.kwargs.get("dtype") is not None:
            self._unsupported(
                node,
                "sum over every dim of a tile",
                "reduce over one dim at a time (`x.sum(-1)`), or sum a 1-D value",
            )
        return RowTotal(x, node_line(node))

    def _reduction(self, node: torch.fx.Node, scope: Scope) -> Value | None:
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
        line = node_line(node)
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
        self, node: torch.fx.Node, scope: Scope, kind: str, x: Value, keepdim: bool, result: Value
    ) -> Value | None:
        """A reduction over an axis of extent 1 (`v[None, :].sum(0, keepdim=True)`) is the
        value itself. Loom's tiles have no axis of extent 1 of their own (a row fills row 0
        of its tiles, the rest is padding), so it is never reduced as a tile axis, which
        would fold the padding in: with keepdim it is a copy, otherwise it is refused."""
        if keepdim and kind in ("sum", "max", "min", "mean"):
            return self._finish(scope, "mul", (x, 1.0), node_line(node), result)
        self._unsupported(
            node,
            f"{kind} over an axis of extent 1 (a broadcast `[None, :]`/`[:, None]` or a "
            "keepdim result)" + ("" if keepdim else " without keepdim=True"),
            "over one element the reduction is the value itself: drop it, or reduce the full "
            "slice before broadcasting",
        )
        return None

    def _argreduce(self, node: torch.fx.Node, scope: Scope) -> object:
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
        line = node_line(node)
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
        scope: Scope,
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
        scope: Scope,
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
        self, scope: Scope, op: str, args: tuple[Operand, ...], line: int, result: Value
    ) -> Value:
        self._emit(scope, Elementwise(result, op, args, line))
        return result

    def _variance(
        self,
        node: torch.fx.Node,
        scope: Scope,
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

    def _var_mean(self, node: torch.fx.Node, scope: Scope) -> list[Value] | None:
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
        line = node_line(node)
        reduced = Value("", flat, x.dtype)
        var = self._temp(Value("", shape, x.dtype), f"{node.name}_var")
        self._variance(node, scope, x, axis, reduced, line, var, keepdim)
        total = self._reduce_into(scope, "sum", x, axis, reduced, line, None, keepdim)
        mean = self._temp(Value("", shape, x.dtype), f"{node.name}_mean")
        self._finish(scope, "mul", (total, 1.0 / n.value), line, mean)
        return [var, mean]
