"""Helion constructs that synchronise blocks, made block-local: phases separated by
`hl.barrier` on one grid run in order on each core (a later phase's loads of what the
same block stored are forwarded, see `loom.frontend.memory`), and split reductions:
`hl.atomic_add` from a split grid axis gathers the partials to one block, which sums
and stores them, and Loom's `gather` (`loom.frontend.language`) gathers a value across a
grid axis."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import replace
from functools import cached_property

import torch
from helion.language import atomic_ops

from loom.frontend.core import ImporterCore
from loom.frontend.language import gather
from loom.frontend.scope import GridBarrierNeeded, Handler, Scope, node_arg, node_line, seq_arg
from loom.ir.tile import ForLoop, Gather, If, Op, Reduce, Store, Value
from loom.symbolic import Const, Sym, cmp


class SyncOps(ImporterCore):
    """Barrier phases and split reductions."""

    def sync_handlers(self) -> dict[object, Handler]:
        return {gather: self._gather, atomic_ops.atomic_add: self._atomic_add}

    # ----- phases (top-level grid loops separated by hl.barrier) ----------------------
    def _same_grid(self, first: list[int], later: list[int]) -> None:
        """A later phase on the same grid takes the first phase's tile symbols and
        indices, so block (i, j) of every phase runs on the same core; a phase on another
        grid needs a launch of its own."""
        sizes = [self.env.block_sizes[b].size for b in first]
        others = [self.env.block_sizes[b].size for b in later]
        same = len(first) == len(later) and all(
            self.block_exprs[a] == self.block_exprs[b] for a, b in zip(first, later, strict=False)
        )
        if sizes != others or not same:
            raise GridBarrierNeeded("grid")
        for a, b in zip(first, later, strict=True):
            self.block_index[b] = self.block_index[a]
            self.block_begin[b] = self.block_begin[a]

    def _drop_scratch(self, ops: tuple[Op, ...]) -> tuple[Op, ...]:
        """Stores of tensors only read back by later phases and not returned by the
        kernel: scratch between phases, which forwarding keeps in L1."""
        returned = self._returned_names()
        scratch = {t for t in self.forwarded if returned is not None and t not in returned}
        kept: list[Op] = []
        for op in ops:
            if isinstance(op, Store) and op.tensor in scratch:
                continue
            if isinstance(op, ForLoop | If):
                op = replace(op, body=self._drop_scratch(op.body))
            kept.append(op)
        for name in scratch:
            self.stored.discard(name)
            self.tensors.pop(name, None)
        return tuple(kept)

    def _returned_names(self) -> set[str] | None:
        tree = self._kernel_ast
        if tree is None:
            return None
        names: set[str] = set()
        for stmt in ast.walk(tree):
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                names.update(n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name))
        return names

    @cached_property
    def _kernel_ast(self) -> ast.AST | None:
        """The kernel function's syntax tree, parsed once (None when its source is unavailable)."""
        try:
            return ast.parse(textwrap.dedent(inspect.getsource(self.bound.kernel.fn)))
        except (OSError, TypeError, SyntaxError):
            return None

    # ----- split reductions -----------------------------------------------------------
    def _gather(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        bid = self._block_of(node.args[0])
        sym = self.block_exprs.get(bid) if bid is not None else None
        if bid not in self.block_index or not isinstance(sym, Sym):
            self._unsupported(node, "gather over a tile that is not a grid axis")
        operand = self._value(scope, node.args[1], node)
        op = Gather(self._new_value(node), operand, sym.name, node_line(node))
        return self._emit(scope, op)

    def _atomic_add(self, node: torch.fx.Node, scope: Scope) -> None:
        """`hl.atomic_add(out, [tile_m, tile_n], part)` into a zero-initialised `out`: the
        blocks along the one grid axis missing from the index (split-K) each add a
        partial, so Loom gathers the partials to the block with index 0 on that axis,
        which sums them and stores the tile (a split reduction; no DRAM atomics)."""
        tensor = scope.values[node_arg(node, 0)]
        index = list(seq_arg(node, 1))
        value = self._operand(scope, node.args[2], node)
        line = node_line(node)
        if not isinstance(tensor, str) or not isinstance(value, Value):
            self._unsupported(node, "hl.atomic_add of a constant or into a tile value")
        assert isinstance(tensor, str) and isinstance(value, Value)
        if not self._zero_initialised(tensor):
            self._unsupported(
                node,
                f"hl.atomic_add into {tensor}, which the kernel does not create with torch.zeros",
                f"create {tensor} inside the kernel with torch.zeros/zeros_like/new_zeros "
                "(Loom stores the sum of the partials, so the tensor must start at zero)",
            )
        used = {self._block_of(e) for e in index}
        split = [b for b in self.device_ir.grid_block_ids[0] if b not in used]
        if len(split) > 1:
            self._unsupported(
                node,
                "hl.atomic_add from blocks split along several grid axes",
                "index the output with every grid axis but one (the split-K axis)",
            )
        window = self._window(node, tensor, index)
        self.stored.add(tensor)
        dtype = self.tensors[tensor].dtype
        if not split:  # every block owns its tile: the add into zeros is a store
            self._emit(scope, Store(tensor, window, self._cast(scope, value, dtype, line), line))
            return
        bid = split[0]
        tile = self.block_exprs[bid]
        assert isinstance(tile, Sym)
        parts = Value("", (self._num_tiles(bid), *value.shape), value.dtype)
        parts = self._renamed(parts, f"{value.name}_parts")
        self._emit(scope, Gather(parts, value, tile.name, line))
        guard = Scope()
        total = self._renamed(value, f"{value.name}_total")
        self._emit(guard, Reduce(total, "sum", parts, 0, line))
        stored = self._cast(guard, total, dtype, line)
        self._emit(guard, Store(tensor, window, stored, line))
        owner = cmp("==", self.block_index[bid], Const(0))
        scope.ops.append(If(owner, tuple(guard.ops), line))

    def _zero_initialised(self, tensor: str) -> bool:
        """Whether the kernel's host code creates `tensor` with a zero fill."""
        tree = self._kernel_ast
        if tree is None:
            return False
        zeros = {"zeros", "zeros_like", "new_zeros"}
        for stmt in ast.walk(tree):
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == tensor for t in stmt.targets)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Attribute)
                and stmt.value.func.attr in zeros
            ):
                return True
        return False
