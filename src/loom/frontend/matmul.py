"""Matmuls (`@`, mm, bmm, addmm, baddbmm, hl.dot) into the Tile IR's `Matmul`, with a
transposed operand (`.transpose(-1, -2)`, `.T`, a `permute` of the last two dims) folded
into the op: on the right as the matrix engine reads it, on the left (`x.T @ g`) as a
transpose of the left block's tiles."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from helion.language import matmul_ops

from loom.frontend.core import ImporterCore
from loom.frontend.scope import Handler, Scope, int_arg, node_line, seq_arg
from loom.ir.tile import Matmul, Value

aten = torch.ops.aten


@dataclass(frozen=True)
class _Transposed:
    """`x.transpose(-1, -2)` waiting to be folded into a matmul's right operand."""

    value: Value


class MatmulOps(ImporterCore):
    """Matmuls and the transposes folded into them."""

    def matmul_handlers(self) -> dict[object, Handler]:
        return {
            matmul_ops.dot: self._dot,
            aten.addmm.default: self._addmm,
            aten.baddbmm.default: self._addmm,
            aten.mm.default: self._mm,
            aten.bmm.default: self._mm,
            # `torch.bmm(a, b, torch.float32)`: the result's dtype is the node's own
            aten.addmm.dtype: self._addmm,
            aten.baddbmm.dtype: self._addmm,
            aten.mm.dtype: self._mm,
            aten.bmm.dtype: self._mm,
            aten.permute.default: self._permute,
            aten.transpose.int: self._transpose,
        }

    def _matmul(
        self, node: torch.fx.Node, scope: Scope, acc: object, a: object, b: object
    ) -> Value | None:
        rhs = scope.values.get(b) if isinstance(b, torch.fx.Node) else None
        transposed = isinstance(rhs, _Transposed)
        rhs_value = rhs.value if isinstance(rhs, _Transposed) else self._value(scope, b, node)
        acc_value = self._value(scope, acc, node) if acc is not None else None
        lhs = scope.values.get(a) if isinstance(a, torch.fx.Node) else None
        lhs_value = lhs.value if isinstance(lhs, _Transposed) else self._value(scope, a, node)
        if "int32" in (lhs_value.dtype, rhs_value.dtype):
            self._unsupported(
                node,
                "a matmul of int32 tiles",
                "the matrix engine multiplies bf16, fp16, fp32 and block-float tiles only; "
                "convert the operands with .float() (exact products below 2^24)",
            )
        op = Matmul(
            self._new_value(node),
            lhs_value,
            rhs_value,
            acc_value,
            transposed,
            node_line(node),
            lhs_transposed=isinstance(lhs, _Transposed),
        )
        return self._emit(scope, op)

    def _addmm(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        if node.kwargs.get("alpha", 1) != 1 or node.kwargs.get("beta", 1) != 1:
            self._unsupported(node, "addmm with alpha/beta")
        return self._matmul(node, scope, node.args[0], node.args[1], node.args[2])

    def _mm(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        return self._matmul(node, scope, None, node.args[0], node.args[1])

    def _dot(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        acc = node.args[2] if len(node.args) > 2 else node.kwargs.get("acc")
        return self._matmul(node, scope, acc, node.args[0], node.args[1])

    def _permute(self, node: torch.fx.Node, scope: Scope) -> _Transposed:
        perm = list(seq_arg(node, 1))
        value = self._value(scope, node.args[0], node)
        swapped = list(range(len(perm)))
        swapped[-2:] = swapped[-1], swapped[-2]
        if perm != swapped:
            self._unsupported(node, f"permute {perm} (only a swap of the last two dims)")
        return _Transposed(value)

    def _transpose(self, node: torch.fx.Node, scope: Scope) -> _Transposed:
        value = self._value(scope, node.args[0], node)
        dims = sorted(d % value.rank for d in (int_arg(node, 1), int_arg(node, 2)))
        if dims != [value.rank - 2, value.rank - 1]:
            self._unsupported(node, "transpose of dims other than the last two")
        return _Transposed(value)
