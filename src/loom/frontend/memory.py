"""Kernel arguments, loads, stores and views: host tensors and scalars, tiles read and
written through windows indexed by tiles or `:`, a later phase's load of what the same
block stored forwarded from the stored value, and new axes (`x[:, None]`, `unsqueeze`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
from helion.language import _tracing_ops, memory_ops, view_ops

from loom.frontend.core import DTYPES, INDEX_DTYPES, dtype_hint
from loom.frontend.gathers import GatherOps
from loom.frontend.leading import LeadingAxisError, store_leading
from loom.frontend.recompute import recompute_stored
from loom.frontend.scope import (
    GridBarrierNeeded,
    Handler,
    Joined,
    Scope,
    node_arg,
    node_line,
    seq_arg,
)
from loom.ir.integers import integer_read
from loom.ir.tile import Convert, ExpandDims, Load, Op, Store, TensorArg, Value, Window
from loom.symbolic import Const, Expr

aten = torch.ops.aten


def _sympy_of(val: torch.SymInt | torch.SymFloat) -> object:
    """The sympy expression behind a symbolic number (Helion keys host origins by it)."""
    sympy_of: Callable[[], object] = val._sympy_  # torch leaves this method unannotated
    return sympy_of()


class MemoryOps(GatherOps):
    """Host tensors and scalars, loads, stores and views."""

    def memory_handlers(self) -> dict[object, Handler]:
        return {
            _tracing_ops._host_tensor: self._host_tensor,
            _tracing_ops._get_symnode: self._symnode,
            memory_ops.load: self._load,
            memory_ops.store: self._store,
            view_ops.subscript: self._subscript,
            aten.sym_size.int: self._sym_size,
            aten.unsqueeze.default: self._unsqueeze,
            aten.squeeze.dim: self._squeeze,
        }

    def _host_tensor(self, node: torch.fx.Node, scope: Scope) -> str:
        name = node.args[0]
        if not isinstance(name, str):
            raise TypeError(f"{node.target}: argument 0 is {name!r}, not a tensor name")
        val = node.meta["val"]
        if name not in self.tensors:
            read = integer_read(val.dtype)
            if val.dtype in INDEX_DTYPES:
                self.index_tensors[name] = val.dtype
            elif val.dtype not in DTYPES and read is None:
                what = f"tensor {name} of dtype {val.dtype}"
                self._unsupported(node, what, dtype_hint(val.dtype))
            elif read is not None and read.tile == "int32" and val.dtype != torch.int32:
                self.widened[name] = val.dtype
            shape = tuple(self._host_extent(node, name, d) for d in val.shape)
            # an int64 tensor is fp32 (argmax's indices) until a load reads it as int32
            held = DTYPES.get(val.dtype) or ("int32" if val.dtype not in INDEX_DTYPES else "fp32")
            self.tensors[name] = TensorArg(name, shape, held, "input")
        return name

    def _host_extent(self, node: torch.fx.Node, name: str, dim: object) -> int:
        """A dim of a host tensor; one computed from a block size (`x.new_empty([cdiv(m,
        m_block), n])`, one row per block) takes the size Loom fixed for that block
        before solving (`loom.frontend.partials`)."""
        if isinstance(dim, int):
            return dim
        extent = self._with_pinned(dim)
        if extent is None:
            origins = self.bound.host_function.expr_to_origin
            expr = getattr(getattr(dim, "node", None), "expr", None)
            names = sorted(
                getattr(getattr(origins.get(sym), "origin", None), "name", str(sym))
                for sym in getattr(expr, "free_symbols", ())
            )
            self._unsupported(
                node,
                f"tensor {name} with a dim Helion leaves symbolic ({dim}: {', '.join(names)})",
                "size tensors from the input shapes, or from a block size "
                "(`hl.register_block_size`, which Loom fixes before solving for such a "
                "tensor); a tunable (`hl.register_tunable`) is a value Loom's solver does not "
                "choose before it lays the tensors out",
            )
        return extent

    def _symnode(self, node: torch.fx.Node, scope: Scope) -> Expr | float:
        val = node.meta["val"]
        if isinstance(val, torch.SymFloat | torch.SymInt) and (
            isinstance(val, torch.SymFloat) or self.env.get_block_id(val) is None
        ):
            folded = self._scalar_expr(_sympy_of(val))
            if folded is not None:
                return folded
        if isinstance(val, float):
            return val
        return self._dim(val, node)

    def _scalar_expr(self, expr: object) -> float | None:
        """The value of a host expression over the kernel's scalar arguments (`beta`,
        `1 - beta`: Loom compiles scalars as constants), or None when it has other
        symbols."""
        origins = self.bound.host_function.expr_to_origin
        origin = origins.get(expr)
        name = getattr(origin.origin, "name", "") if origin is not None else ""
        if name in self.scalars:
            return self.scalars[name]
        free = getattr(expr, "free_symbols", None)
        if not free:
            return None
        values = {}
        for sym in free:
            found = origins.get(sym)
            name = getattr(found.origin, "name", "") if found is not None else ""
            if name not in self.scalars:
                return None
            values[sym] = self.scalars[name]
        folded = expr.subs(values)  # type: ignore[attr-defined]
        return float(folded) if folded.is_number else None

    def _sym_size(self, node: torch.fx.Node, scope: Scope) -> Expr:
        return self._dim(node.meta["val"], node)

    def _tensor_of(self, scope: Scope, node: torch.fx.Node) -> str:
        """Name of the host tensor a load or store node reads or writes (argument 0)."""
        tensor = scope.values[node_arg(node, 0)]
        if not isinstance(tensor, str):
            self._unsupported(node, f"a load or store of {tensor} (not a kernel argument)")
        return tensor

    def _load(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        tensor = scope.values[node_arg(node, 0)]
        if isinstance(tensor, Value):  # `tile.index[:, None]`: a subscript of a tile value
            return self._insert_axis(node, scope, tensor, list(seq_arg(node, 1)))
        if not isinstance(tensor, str):
            self._unsupported(node, f"a load of {tensor} (not a kernel argument)")
        if tensor in self.index_tensors:
            return self._load_indices(node, scope, tensor)
        picked = self._pick_constant(node, scope, tensor, list(seq_arg(node, 1)), self._note_load)
        if picked is not None:
            return picked
        if node.meta["val"].dim() == 0 and any(type(e) is int for e in seq_arg(node, 1)):
            self._unsupported(
                node,
                f"a load of one element of {tensor} by constant indices (a 0-d value)",
                "a tile holds no 0-d value: read the element with its neighbours (`x[..., "
                "tile_k]`) and select it there, or pass it as its own tensor",
            )
        index, masks = self._shifted_entries(node, scope, tensor, list(seq_arg(node, 1)))
        loaded = self._load_window(node, scope, tensor, index)
        if len(node.args) > 2 and node.args[2] is not None:
            masks.append(self._value(scope, node.args[2], node))
        line = node_line(node)
        for mask in masks:  # masked elements read as 0, as Helion's masked loads give
            assert loaded is not None
            loaded = self._ew(scope, "mul", (loaded, mask), loaded, line, f"{tensor}_masked")
        return loaded

    def _load_window(
        self, node: torch.fx.Node, scope: Scope, tensor: str, index: list[object]
    ) -> Value | None:
        """The tile a load reads: gathered, forwarded from a store, shared with an
        earlier load of the same window, or loaded."""
        if self._gathered(scope, index):
            return self._gather_rows(node, scope, tensor, index, self._note_load)
        if None in index and len(index) > len(self.tensors[tensor].shape):
            return self._load_new_axes(node, scope, tensor, index)
        window = self._window(node, tensor, index)
        forwarded = self._forwarded(node, scope, tensor, window)
        if forwarded is None:
            forwarded = self._stored_before(node, scope, tensor, window)
        if forwarded is not None:
            return forwarded
        loaded = self._loaded_before(scope, tensor, window, self._dtype(node.meta["val"], node))
        if loaded is not None:
            return loaded
        self._note_load(scope, tensor, window)
        result = self._new_value(node, f"{tensor}_tile")
        return self._emit(scope, Load(result, tensor, window, node_line(node)))

    def _load_indices(self, node: torch.fx.Node, scope: Scope, tensor: str) -> Value | None:
        """A load of an int64 tensor (labels, token ids): the host stores it as int32
        (checking its range, loom.ir.integers), the tile is converted to the exact fp32
        integers Loom's index values are."""
        if tensor in self.stored:
            what = f"reading the int64 tensor {tensor}, which the kernel also stores"
            self._unsupported(node, what, "read indices from one tensor and store into another")
        self.read_indices.add(tensor)
        self.tensors[tensor] = dataclasses.replace(self.tensors[tensor], dtype="int32")
        window = self._window(node, tensor, list(seq_arg(node, 1)))
        result = self._new_value(node)
        loaded = self._loaded_before(scope, tensor, window, "int32")
        if loaded is None:
            self._note_load(scope, tensor, window)
            raw = self._renamed(Value("", result.shape, "int32"), f"{tensor}_tile")
            loaded = self._emit(scope, Load(raw, tensor, window, node_line(node)))
        assert loaded is not None
        return self._emit(scope, Convert(result, loaded, node_line(node)))

    def _load_new_axes(
        self, node: torch.fx.Node, scope: Scope, tensor: str, index: list[object]
    ) -> Value | None:
        """`w[None, :]`: the load of the other entries, then the new axis inserted (as
        `w[:][None, :]` would)."""
        if index.count(None) != 1:
            self._unsupported(node, f"indexing {tensor} with several new axes (None)")
        axis = index.index(None)
        window = self._window(node, tensor, [e for e in index if e is not None])
        self._note_load(scope, tensor, window)
        shape = self._new_value(node).shape
        loaded = self._renamed(
            Value("", shape[:axis] + shape[axis + 1 :], self._dtype(node.meta["val"], node)),
            f"{tensor}_tile",
        )
        self._emit(scope, Load(loaded, tensor, window, node_line(node)))
        result = self._renamed(Value("", shape, loaded.dtype), node.name)
        return self._emit(scope, ExpandDims(result, loaded, axis, node_line(node)))

    def _note_load(self, scope: Scope, tensor: str, window: tuple[Window, ...]) -> None:
        """Record which phase reads `tensor` (and, at the top level, its window) for the
        phases' forwarding and barrier rules."""
        top = scope is self.root_scope
        self.phase_loads.setdefault(tensor, []).append((self.phase, window if top else ()))

    @staticmethod
    def _loaded_before(
        scope: Scope, tensor: str, window: tuple[Window, ...], dtype: str
    ) -> Value | None:
        """The value of an identical load earlier in the same loop body (`x[tile_m,
        tile_k]` read by two matmuls): one load, one buffer, both consumers read it. No
        store can come between: a tensor this phase stores is read only through the
        stored value (`_stored_before`)."""
        for op in scope.ops:
            if (
                isinstance(op, Load)
                and op.tensor == tensor
                and op.window == window
                and op.result.dtype == dtype
            ):
                return op.result
        return None

    def _forwarded(
        self, node: torch.fx.Node, scope: Scope, tensor: str, window: tuple[Window, ...]
    ) -> Value | None:
        """A later phase reading what an earlier phase stored: the same block wrote that
        window, so its value is forwarded (no DRAM round trip, no grid-wide barrier)."""
        written = self.phase_stores.get(tensor)
        if written is None or written[0] == self.phase:
            return None
        _, where, value = written
        if where != window:
            raise GridBarrierNeeded(tensor)
        self.forwarded.add(tensor)
        return self._cast(scope, value, self.tensors[tensor].dtype, node_line(node))

    def _stored_before(
        self, node: torch.fx.Node, scope: Scope, tensor: str, window: tuple[Window, ...]
    ) -> Value | None:
        """A load of what this phase already stored: the loads and the stores run on
        different data-movement threads, which do not wait for each other, so the load
        would race the store. The same window stored earlier in the same loop body is the
        stored value itself (`d[tile] = ...; out[tile] = x[tile] * d[tile]`); the window
        an earlier inner loop stored is recomputed (`loom.frontend.recompute`); any other
        read of a tensor this phase stores is refused."""
        written = self.phase_stores.get(tensor)
        if written is None or written[0] != self.phase:
            return None
        for op in reversed(scope.ops):
            if isinstance(op, Store) and op.tensor == tensor:
                if op.window == window:
                    return self._cast(scope, op.value, self.tensors[tensor].dtype, op.line)
                break
        last = (window, written[2])  # the value stored last, wherever its store sits
        again = recompute_stored(self.root_scope.ops, tensor, last, self.stored, self._renamed)
        if again is not None:  # stored by an earlier inner loop: recompute, do not re-read
            ops, value = again
            scope.ops.extend(ops)
            return self._cast(scope, value, self.tensors[tensor].dtype, node_line(node))
        self._unsupported(
            node,
            f"a load of {tensor}, which the same hl.tile loop stores before it",
            "a kernel's loads and stores run on separate data-movement threads that do not "
            "wait for each other, so the load would race the store; keep the value in a "
            "variable, load exactly the window the same loop body stored, or put the loop "
            "that reads it after an hl.barrier() in a grid loop of its own",
        )

    def _store(self, node: torch.fx.Node, scope: Scope) -> None:
        tensor = self._tensor_of(scope, node)
        self.stored.add(tensor)
        window = self._window(node, tensor, seq_arg(node, 1))
        if tensor in self.widened:
            self._unsupported(
                node,
                f"storing into the {self.widened[tensor]} tensor {tensor}",
                "Loom reads narrow integer tensors widened to int32 but does not narrow "
                "results back (torch would wrap them at that width); store into an int32 "
                "tensor (`torch.empty(..., dtype=torch.int32)`)",
            )
        if tensor in self.read_indices:
            what = f"storing into the int64 tensor {tensor}, which the kernel reads"
            self._unsupported(node, what, "read indices from one tensor and store into another")
        arg = node.args[2]
        joined = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else None
        if not isinstance(joined, Joined):
            value = self._value(scope, arg, node)
            self._store_windows(node, scope, tensor, [(window, value)])
            return
        parts, offset = [], window[-1].offset  # each part into its own slice of the last dim
        for part in joined.parts:
            size = part.shape[-1]
            parts.append(((*window[:-1], Window(offset, size)), part))
            offset = offset + size
        self._store_windows(node, scope, tensor, parts)

    def _store_windows(
        self,
        node: torch.fx.Node,
        scope: Scope,
        tensor: str,
        parts: list[tuple[tuple[Window, ...], Value]],
    ) -> None:
        """Store each value into its window (one, or the parts of a joined value)."""
        stores = []
        for window, value in parts:
            if tensor in self.index_tensors and value.name not in self.index_values:
                dtype = self.index_tensors[tensor]
                what = f"storing a computed value into the {dtype} tensor {tensor}"
                self._unsupported(node, what, dtype_hint(dtype))
            if self.tensors[tensor].dtype == "int32":  # torch truncates a float stored there
                value = self._cast(scope, value, "int32", node_line(node))
            sizes = tuple(w.size for w in window)
            value = self._broadcast_to(scope, value, sizes, node_line(node))
            stores.append(Store(tensor, window, value, node_line(node)))
        lead = [
            d
            for d, w in enumerate(parts[0][0][:-2])
            if isinstance(w.size, Const) and w.size.value > 1
        ]
        if lead:
            self._emit(scope, self._store_leading(node, scope, stores, lead))
        for store in stores:
            if not lead:
                self._emit(scope, store)
            read = self.phase_loads.get(tensor, [])
            if any(phase < self.phase and where != store.window for phase, where in read):
                raise GridBarrierNeeded(tensor)  # other blocks read these tiles before
            top = scope is self.root_scope and not lead  # a store in a loop is not forwarded
            self.phase_stores[tensor] = (self.phase, store.window if top else (), store.value)

    def _store_leading(
        self, node: torch.fx.Node, scope: Scope, stores: list[Store], lead: list[int]
    ) -> Op:
        """A store of a whole leading axis (`out[tile_b, :, tile_t, :]`, the heads):
        tiles are 2-D and a block holds one index of each leading dim, so the store runs
        in a loop over the axis, each trip recomputing one slice (see
        `loom.frontend.leading`)."""
        hint = (
            "a block stores one index of each leading dim: compute the stored value from "
            "loads, elementwise ops, conversions and fills of the same loop body, or index "
            "the leading dim with a tile (`hl.tile([b, heads, t])`)"
        )
        if len(lead) > 1:
            self._unsupported(node, f"a store of several whole leading dims {lead}", hint)
        try:
            loop = store_leading(scope.ops, stores, lead[0], self._renamed)
        except LeadingAxisError as err:
            what = f"a store of a whole leading dim computed by {type(err.op).__name__}"
            self._unsupported(node, what, hint)
        self.superseded.update(loop.superseded)
        return loop.ops[0]

    def _subscript(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        operand = self._value(scope, node.args[0], node)
        return self._insert_axis(node, scope, operand, list(seq_arg(node, 1)))

    def _insert_axis(
        self, node: torch.fx.Node, scope: Scope, operand: Value, index: list[object]
    ) -> Value | None:
        """`x[None, None, :]`: one ExpandDims per None, in order, each axis counted in
        the subscript's result (so each insertion sees the axes inserted before it)."""
        if any(e is not None and e != slice(None) for e in index) or None not in index:
            self._unsupported(node, "subscript other than inserting axes with None")
        axes = [i for i, e in enumerate(index) if e is None]
        value = operand
        for k, axis in enumerate(axes):
            shape = (*value.shape[:axis], Const(1), *value.shape[axis:])
            name = node.name if k == len(axes) - 1 else f"{node.name}_{k}"
            result = self._renamed(Value("", shape, value.dtype), name)
            emitted = self._emit(scope, ExpandDims(result, value, axis, node_line(node)))
            assert isinstance(emitted, Value)
            value = emitted
        return value

    def _unsqueeze(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        x = self._operand(scope, node.args[0], node)
        assert isinstance(x, Value)
        dim = node.args[1]
        assert isinstance(dim, int)
        axis = dim % (x.rank + 1)
        bid = self.index_loads.get(x.name)
        if bid is not None and x.rank == 1 and axis == 1:
            return self._index_column(bid, node, scope)
        return self._emit(scope, ExpandDims(self._new_value(node), x, axis, node_line(node)))

    def _squeeze(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        """`x.squeeze(-1)` of a value whose one-wide axis an earlier `keepdim=True` or
        `x[:, None]` inserted in the same loop body: the value before the insertion."""
        x = self._value(scope, node.args[0], node)
        dim = node.args[1] if len(node.args) > 1 else None
        axis = dim % x.rank if isinstance(dim, int) else None
        for op in reversed(scope.ops):
            if isinstance(op, ExpandDims) and op.result == x and op.axis == axis:
                return op.operand
        self._unsupported(
            node,
            "squeeze of a value other than one with an axis inserted in the same loop body",
            "squeeze the axis a `keepdim=True` reduction or `[:, None]` kept in the same loop "
            "body, or reduce with keepdim=False",
        )
