"""Elementwise ops, conversions and fills: the torch surface rewritten into the Tile IR's
few primitives.

Each handler turns one op of a Helion device graph into Elementwise, Convert or Full ops,
so that every construct has a model cost and a TT-Lang lowering without new IR:
`torch.where(c, a, b)` is `c*a + (1-c)*b` over a 0/1 mask (finite fills only, so no
0 * inf arises), `x ** 2` a product, tanh-GELU its polynomial through `tanh`, and
`full_like`/`zeros_like`/`empty_like`/`new_*` a constant fill (Loom has no uninitialised
tiles: an empty tile reads as zeros).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from helion.language import creation_ops

from loom.frontend.core import DTYPES, INDEX_DTYPES, ImporterCore, dtype_hint
from loom.frontend.scope import Handler, LocalIndex, Operand, RowTotal, Scope, node_line
from loom.ir.tile import Convert, Elementwise, Full, Value
from loom.symbolic import Const, Expr

aten = torch.ops.aten
prims = torch.ops.prims

try:  # Helion's own GELU ops (it rewrites F.gelu into them in some versions)
    from helion.language._gelu_tanh_approx import _gelu_erf as _GELU_ERF
    from helion.language._gelu_tanh_approx import _gelu_tanh_approx as _GELU_TANH
except ImportError:  # pragma: no cover - other Helion versions
    _GELU_ERF = _GELU_TANH = None

_UNARY = {
    aten.exp.default: "exp",
    aten.exp2.default: "exp2",
    aten.log.default: "log",
    aten.neg.default: "neg",
    aten.reciprocal.default: "recip",
    aten.sqrt.default: "sqrt",
    aten.rsqrt.default: "rsqrt",
    aten.sigmoid.default: "sigmoid",
    aten.tanh.default: "tanh",
    aten.relu.default: "relu",
    aten.abs.default: "abs",
    aten.silu.default: "silu",
}
_BINARY = {
    aten.add.Tensor: "add",
    aten.sub.Tensor: "sub",
    aten.mul.Tensor: "mul",
    aten.div.Tensor: "div",
    aten.maximum.default: "maximum",
    aten.minimum.default: "minimum",
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
    aten.ne.Tensor: ("ne", False),
    aten.ne.Scalar: ("ne", False),
    aten.eq.Tensor: ("ne", True),
    aten.eq.Scalar: ("ne", True),
}
"""Comparison -> (primitive, negate): `a >= b` is `1 - (a < b)`; `ne` is no primitive
but `(a < b) + (a > b)` (exact: the two masks never overlap), so `a == b` (a label
compared with the column indices) is `1 - ((a < b) + (a > b))`."""
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


class ElementwiseOps(ImporterCore):
    """Elementwise arithmetic and math, comparisons and selections, conversions, fills."""

    def elementwise_handlers(self) -> dict[object, Handler]:
        table: dict[object, Handler] = {
            creation_ops.full: self._full,
            prims.convert_element_type.default: self._convert,
            aten._to_copy.default: self._convert,
        }
        for target in _UNARY:
            table[target] = self._unary
        for target in _BINARY:
            table[target] = self._binary
        for target in _COMPARE:
            table[target] = self._compare
        for target in _FILL_LIKE:
            table[target] = self._fill_like
        table[aten.gelu.default] = self._gelu
        table[aten.scalar_tensor.default] = self._scalar_tensor
        if _GELU_TANH is not None:
            table[_GELU_TANH] = self._gelu
            table[_GELU_ERF] = self._gelu
        table[aten.pow.Tensor_Scalar] = self._pow
        table[aten.square.default] = self._square
        table[aten.log2.default] = self._log2
        table[aten.where.self] = self._where
        table[aten.rsub.Scalar] = self._rsub
        table[aten.clone.default] = self._identity
        table[aten.alias.default] = self._identity
        table[aten.clamp_min.default] = self._clamp_min
        table[aten.clamp_max.default] = self._clamp_max
        table[aten.clamp.default] = self._clamp
        return table

    # ----- arithmetic -----------------------------------------------------------------
    def _unary(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        op = _UNARY[node.target]  # type: ignore[index]
        return self._emit(scope, Elementwise(self._new_value(node), op, (x,), node_line(node)))

    def _binary(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        if node.target is aten.add.Tensor:
            offset = self._plus_begin(node, scope)
            if offset is not None:
                return offset
        if node.kwargs.get("alpha", 1) != 1:
            self._unsupported(node, "add/sub with alpha")
        op = _BINARY[node.target]  # type: ignore[index]
        return self._elementwise(node, scope, op, node.args[:2])

    def _elementwise(
        self, node: torch.fx.Node, scope: Scope, op: str, args: Sequence[object]
    ) -> Value | None:
        if len(args) == 2 and (args[0] is None) != (args[1] is None):
            # Helion traces `x * x` as mul(x, None): the same tensor used twice
            args = [args[0] if args[0] is not None else args[1]] * 2
        result = self._new_value(node)
        operands = [self._operand_as(scope, arg, node, result) for arg in args]
        return self._emit(scope, Elementwise(result, op, tuple(operands), node_line(node)))

    def _operand_as(self, scope: Scope, arg: object, node: torch.fx.Node, result: Value) -> Operand:
        """An operand of an elementwise op; the total of a vector (`v.sum()`) in the
        shape of the op's result."""
        value = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else None
        if isinstance(value, RowTotal):
            return self._total_as(scope, value, result)
        return self._operand(scope, arg, node)

    def _plus_begin(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        """`x.argmax(-1) + tile_n.begin` over the tile of a looped dim: the index in the
        tensor, which the argmax computed already (see `loom.frontend.reductions`)."""
        a, b = (scope.values.get(v) if isinstance(v, torch.fx.Node) else v for v in node.args[:2])
        local, other = (a, b) if isinstance(a, LocalIndex) else (b, a)
        if not isinstance(local, LocalIndex):
            return None
        if not isinstance(other, Expr) or other != local.begin:
            self._unsupported(
                node,
                f"the {local.what} of a tile of a looped dim plus {other}",
                "add the begin of the tile it runs over (`+ tile_n.begin`)",
            )
        return local.value

    def _scalar_tensor(self, node: torch.fx.Node, scope: Scope) -> float:
        """`torch.where(c, x, 0.0)` wraps the 0.0 in a 0-d tensor: keep it a constant."""
        return self._number(scope, node.args[0], node)

    def _identity(self, node: torch.fx.Node, scope: Scope) -> object:
        return self._operand(scope, node.args[0], node)

    def _gelu(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        line = node_line(node)
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

    def _pow(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        p = node.args[1]
        line = node_line(node)
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

    def _log2(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        """`log2(x)` is `log(x) / ln 2` (the SFPU has a natural log only)."""
        x = self._operand(scope, node.args[0], node)
        assert isinstance(x, Value)
        line = node_line(node)
        ln = self._ew(scope, "log", (x,), self._new_value(node), line, "log2_ln")
        return self._emit(
            scope, Elementwise(self._new_value(node), "mul", (ln, 1.0 / math.log(2.0)), line)
        )

    def _square(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        return self._emit(scope, Elementwise(self._new_value(node), "mul", (x, x), node_line(node)))

    def _rsub(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        other = self._number(scope, node.args[1], node)
        line = node_line(node)
        return self._emit(scope, Elementwise(self._new_value(node), "sub", (other, x), line))

    def _compare(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        op, negate = _COMPARE[node.target]  # type: ignore[index]
        args = list(node.args[:2])
        if (args[0] is None) != (args[1] is None):
            # Helion traces `x > x` as gt(x, None), as it does `x * x`: one tensor twice
            args = [args[0] if args[0] is not None else args[1]] * 2
        a = self._operand(scope, args[0], node)
        b = self._operand(scope, args[1], node)
        line = node_line(node)
        result = self._new_value(node, node.name)
        result = Value(result.name, result.shape, "fp32")
        if op == "ne":
            return self._not_equal(scope, a, b, result, negate, line)
        if not negate:
            return self._emit(scope, Elementwise(result, op, (a, b), line))
        mask = self._ew(scope, op, (a, b), Value("", result.shape, "fp32"), line, "cmp")
        return self._emit(scope, Elementwise(result, "sub", (1.0, mask), line))

    def _where(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        cond = self._operand(scope, node.args[0], node)
        a = self._operand(scope, node.args[1], node)
        b = self._operand(scope, node.args[2], node)
        line = node_line(node)
        result = self._new_value(node)
        if not isinstance(cond, Value):
            self._unsupported(node, "torch.where with a constant condition", "use the branch")
            return None
        take_a = self._ew(scope, "mul", (cond, a), _broadcast(result, cond, a), line, "where_a")
        inverse = self._ew(scope, "sub", (1.0, cond), cond, line, "where_not")
        like_b = _broadcast(result, inverse, b)
        take_b = self._ew(scope, "mul", (inverse, b), like_b, line, "where_b")
        return self._emit(scope, Elementwise(result, "add", (take_a, take_b), line))

    def _number(self, scope: Scope, arg: object, node: torch.fx.Node) -> float:
        value = self._operand(scope, arg, node)
        if not isinstance(value, float):
            self._unsupported(node, f"{node.target} with a tensor bound", "use constant bounds")
        return value

    def _clamp_min(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        lo = self._number(scope, node.args[1], node)
        return self._emit(
            scope, Elementwise(self._new_value(node), "maximum", (x, lo), node_line(node))
        )

    def _clamp_max(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        hi = self._number(scope, node.args[1], node)
        return self._emit(
            scope, Elementwise(self._new_value(node), "minimum", (x, hi), node_line(node))
        )

    def _clamp(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
        hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
        line = node_line(node)
        assert isinstance(x, Value)
        if lo is not None and hi is not None:
            low = self._number(scope, lo, node)
            x = self._ew(scope, "maximum", (x, low), x, line, "clamp_lo")
            high = self._number(scope, hi, node)
            return self._emit(scope, Elementwise(self._new_value(node), "minimum", (x, high), line))
        op, bound = ("maximum", lo) if lo is not None else ("minimum", hi)
        limit = self._number(scope, bound, node)
        return self._emit(scope, Elementwise(self._new_value(node), op, (x, limit), line))

    # ----- conversions and fills ------------------------------------------------------
    def _convert(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        operand = self._value(scope, node.args[0], node)
        dtype = node.meta["val"].dtype
        if operand.name in self.index_loads and dtype == torch.float32:
            return operand  # index vectors are fp32 already
        if dtype in INDEX_DTYPES and operand.name in self.index_values:
            return operand  # indices stay exact fp32 integers
        if dtype not in DTYPES:
            self._unsupported(node, f".to({dtype})", dtype_hint(dtype))
        result = self._new_value(node, f"{operand.name}_{DTYPES[node.meta['val'].dtype]}")
        return self._emit(scope, Convert(result, operand, node_line(node)))

    def _full(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        fill = node.args[1]
        if not isinstance(fill, int | float):
            self._unsupported(node, f"a fill with {fill}", "fill with a constant")
        return self._emit(scope, Full(self._new_value(node), float(fill), node_line(node)))

    def _fill_like(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        pos = _FILL_LIKE[node.target]  # type: ignore[index]
        fill = 1.0 if node.target in _ONES else 0.0
        if pos is not None:
            raw = node.args[pos] if len(node.args) > pos else node.kwargs.get("fill_value", 0.0)
            value = scope.values.get(raw, raw) if isinstance(raw, torch.fx.Node) else raw
            if not isinstance(value, int | float):
                self._unsupported(node, "a fill with a tensor value", "fill with a constant")
            fill = float(value)
        return self._emit(scope, Full(self._new_value(node), fill, node_line(node)))
