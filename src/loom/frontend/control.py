"""Control flow: an inner `hl.tile` loop becomes a `ForLoop` (its carried values read from
Helion's `_phi` nodes), an `if` on tile ids (`tile.id == 0`) an `If`, and an `if` on a
comparison of numbers (constants and scalar arguments, which Loom compiles as
constants) is decided at compile time: only the taken branch is converted."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
from helion._compiler.device_ir import ForLoopGraphInfo, IfGraphInfo
from helion.language import _tracing_ops

from loom.frontend.core import ImporterCore
from loom.frontend.scope import (
    Handler,
    LocalIndex,
    Scope,
    as_node,
    int_arg,
    node_arg,
    node_line,
    seq_arg,
)
from loom.ir.tile import Carried, ForLoop, If, Value
from loom.symbolic import BoolConst, Cond, Const, Expr, Sym, as_expr, cmp

_SCALAR_COMPARE = {
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
"""Python comparisons between numbers (constants, scalar arguments) or tile ids."""


@dataclass(frozen=True)
class _NotTaken:
    """An output of the branch of a constant `if` that is not taken: the `_phi` merging
    it takes the other side."""


_NOT_TAKEN = _NotTaken()


@dataclass(frozen=True)
class _BranchOutput:
    """A value an `if` on tile offsets (`if outer_k.begin == 0:`) leaves in a variable:
    the `_phi` merging it with the value before the `if` accepts it only where the
    branch left it unchanged (`acc = epilogue(acc)` with the identity epilogue); a value
    that differs between the blocks taking the branch and the others is refused there."""

    value: object
    line: int


class ControlOps(ImporterCore):
    """Inner loops and conditions."""

    def control_handlers(self) -> dict[object, Handler]:
        return {
            _tracing_ops._for_loop: self._for_loop,
            _tracing_ops._phi: self._phi,
            _tracing_ops._if: self._if,
            operator.getitem: self._getitem,
            **{target: self._compare_scalars for target in _SCALAR_COMPARE},
            _tracing_ops._not: self._not,
        }

    def _getitem(self, node: torch.fx.Node, scope: Scope) -> object:
        container = scope.values[node_arg(node, 0)]
        if not isinstance(container, list | tuple):
            self._unsupported(node, "indexing a non-loop result")
        return container[int_arg(node, 1)]

    def _phi(self, node: torch.fx.Node, scope: Scope) -> object:
        before = scope.values[node_arg(node, 0)]
        merged = scope.values[node_arg(node, 1)]
        if isinstance(merged, _BranchOutput) or isinstance(before, _BranchOutput):
            if isinstance(merged, _BranchOutput) and merged.value is before:
                return before
            self._unsupported(
                node,
                "a tensor value assigned under an `if` on tile offsets or ids",
                "the blocks that take the branch and the others must end with the same "
                "values; compute the value in both cases with a mask (`torch.where`), or "
                "store it inside the branch",
            )
        return before if merged is _NOT_TAKEN else merged

    def _for_loop(self, node: torch.fx.Node, scope: Scope) -> list[Value]:
        graph_id = int_arg(node, 0)
        begins, ends, args = seq_arg(node, 1), seq_arg(node, 2), seq_arg(node, 3)
        info = self.device_ir.graphs[graph_id]
        assert isinstance(info, ForLoopGraphInfo)
        if len(info.block_ids) != 1:
            self._unsupported(node, "a multi-dimensional inner hl.tile loop")
        bid = info.block_ids[0]
        tile = self.block_exprs.get(bid)
        if not isinstance(tile, Sym):
            self._unsupported(node, "an inner loop without a named tile")
        begin = self._bound(scope, begins[0])
        end = self._bound(scope, ends[0])
        index = Sym(f"{tile.name}_id", 0, max(tile.upper - 1, 0), 1, "index")
        self.block_index[bid] = index
        self.block_begin[bid] = begin + index * tile
        carried_pos = self._carried_positions(node)
        inputs: list[object] = []
        iter_args: dict[int, Value] = {}
        for pos, arg in enumerate(args):
            init = scope.values[as_node(arg)]
            if pos in carried_pos:
                assert isinstance(init, Value)
                iter_args[pos] = self._renamed(init, f"{init.name}_iter")
                inputs.append(iter_args[pos])
            else:
                inputs.append(init)
        body = Scope()
        outputs = self._convert_graph(info, body, inputs)
        assert isinstance(outputs, list)
        carried: list[Carried] = []
        results: list[Value | None] = [None] * len(outputs)
        for pos, out_index in sorted(carried_pos.items(), key=lambda kv: kv[1]):
            init = scope.values[as_node(args[pos])]
            nxt = outputs[out_index]
            assert isinstance(init, Value)  # a carried position holds a tile (checked above)
            if isinstance(nxt, LocalIndex):
                self._local_index_error(node, nxt)
            if not isinstance(nxt, Value):
                self._unsupported(node, f"a loop-carried value updated to {nxt}", "carry a tile")
            result = self._renamed(init, f"{init.name}_final")
            if init.name in self.index_values and nxt.name in self.index_values:
                self.index_values.update((iter_args[pos].name, result.name))
            carried.append(Carried(init, iter_args[pos], nxt, result))
            results[out_index] = result
        loop_op = ForLoop(tile, index, begin, end, tuple(body.ops), tuple(carried), node_line(node))
        scope.ops.append(loop_op)
        # outputs that are not carried values are never read (Helion's loop results are
        # the carried values only); the list keeps the FX output positions
        return cast("list[Value]", results)

    def _carried_positions(self, loop_node: torch.fx.Node) -> dict[int, int]:
        """Input position of each carried value -> its output index (read from `_phi`)."""
        args = list(seq_arg(loop_node, 3))
        found: dict[int, int] = {}
        for user in loop_node.users:
            if user.target is not operator.getitem:
                continue
            for phi in user.users:
                if phi.target is _tracing_ops._phi:
                    found[args.index(phi.args[0])] = int_arg(user, 1)
        return found

    def _bound(self, scope: Scope, arg: object) -> Expr:
        if isinstance(arg, torch.fx.Node):
            value = scope.values.get(arg)
            if isinstance(value, Expr):
                return value
            return self._dim(arg.meta["val"], arg)
        if not isinstance(arg, int):
            raise TypeError(f"loop bound {arg!r} is neither an FX node nor an integer")
        return as_expr(arg)

    def _if(self, node: torch.fx.Node, scope: Scope) -> list[object]:
        cond = scope.values[node_arg(node, 0)]
        if isinstance(cond, BoolConst):
            cond = cond.value
        if isinstance(cond, bool):
            return self._constant_if(node, scope, cond)
        info = self.device_ir.graphs[int_arg(node, 1)]
        assert isinstance(info, IfGraphInfo)
        if not isinstance(cond, Cond):
            self._unsupported(node, "an `if` on a tensor value")
        inputs = [scope.values[as_node(a)] for a in seq_arg(node, 3)]
        body = Scope()
        outputs = self._convert_graph(info, body, inputs)
        if body.ops:
            scope.ops.append(If(cond, tuple(body.ops), node_line(node)))
        return self._branch_outputs(info, inputs, outputs, node_line(node))

    def _branch_outputs(
        self, info: IfGraphInfo, inputs: list[object], outputs: object, line: int
    ) -> list[object]:
        """The values of an `if` on tile offsets, as Helion's `_if` lists them (one per
        variable a branch assigns, first as the if branch leaves it, then as the else
        branch does): a variable the else branch leaves unchanged holds its value before
        the `if`, which is the if branch's input of that name; the if branch's values
        are checked against it at their `_phi`, and the else branch is never converted."""
        pairs = getattr(info, "branches_outputs", None) or []
        names = list(getattr(info, "if_arg_names", None) or [])
        results = outputs if isinstance(outputs, list) else []
        before = dict(zip(names, inputs, strict=False))
        taken: list[object] = []
        other: list[object] = []
        for if_side, else_side in pairs:
            if isinstance(if_side, int) and if_side < len(results):
                taken.append(_BranchOutput(results[if_side], line))
            else:
                taken.append(before.get(str(if_side), _BranchOutput(None, line)))
            unchanged = isinstance(else_side, str) and else_side in before
            other.append(before[str(else_side)] if unchanged else _BranchOutput(None, line))
        return taken + other

    def _constant_if(self, node: torch.fx.Node, scope: Scope, taken: bool) -> list[object]:
        """An `if` whose condition is decided at compile time (`if beta == 0.0:` on a
        scalar argument, which Loom compiles as a constant): the taken branch is
        converted in place, the other dropped. Helion's `_if` returns one value per
        variable either branch assigns, first as the if branch leaves it, then as the
        else branch does (`IfGraphInfo.branches_outputs`: the index of each in its
        branch's outputs, or a name where that branch leaves it unchanged); each `_phi`
        merges the two, and takes the other side of one not taken."""
        info = self.device_ir.graphs[int_arg(node, 1)]
        pairs = getattr(info, "branches_outputs", None)
        if not isinstance(info, IfGraphInfo) or not isinstance(pairs, list):
            self._unsupported(node, "an `if` of this Helion version", "use a mask")
        side = 0 if taken else 1
        graph_id, args = node.args[1 + side], node.args[3 + side]
        outputs: list[object] = [_NOT_TAKEN] * (2 * len(pairs))
        if not isinstance(graph_id, int) or not isinstance(args, list | tuple):
            return outputs
        values = [scope.values.get(a, a) if isinstance(a, torch.fx.Node) else a for a in args]
        result = self._convert_graph(self.device_ir.graphs[graph_id], scope, values)
        assert isinstance(result, list)
        for i, pair in enumerate(pairs):
            if isinstance(pair[side], int):
                outputs[side * len(pairs) + i] = result[pair[side]]
        return outputs

    def _compare_scalars(self, node: torch.fx.Node, scope: Scope) -> Cond | bool:
        """`==`, `!=`, `<`, ... between numbers is decided now (a constant, folded);
        between tile ids it is a condition on the core's index."""
        op = _SCALAR_COMPARE[node.target]  # type: ignore[index]
        lhs, rhs = (
            scope.values.get(a, a) if isinstance(a, torch.fx.Node) else a for a in node.args
        )
        if isinstance(lhs, Const):
            lhs = lhs.value
        if isinstance(rhs, Const):
            rhs = rhs.value
        if isinstance(lhs, int | float) and isinstance(rhs, int | float):
            return bool(_FOLD[op](lhs, rhs))
        if not isinstance(lhs, Expr | int) or not isinstance(rhs, Expr | int):
            self._unsupported(
                node,
                f"`{op}` between {lhs} and {rhs}",
                "compare numbers (constants or scalar arguments, decided at compile time) "
                "or tile ids (`tile.id == 0`); a comparison of tensor values is a mask "
                "(`torch.where`)",
            )
        return cmp(op, as_expr(lhs), as_expr(rhs))

    def _not(self, node: torch.fx.Node, scope: Scope) -> bool:
        value = scope.values.get(node_arg(node, 0))
        if isinstance(value, BoolConst):
            value = value.value
        if not isinstance(value, bool):
            self._unsupported(node, f"`not` of {value}", "negate a constant condition only")
        return not value


_FOLD: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
