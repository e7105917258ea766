"""Row gathers by loaded indices (`weight[idx[tile_b], tile_e]`, an embedding lookup),
compiled as a one-hot matmul over the whole table; and picks of one element per row or
column (a label's logit, a constant index inside a 32x32 tile) from the tile that holds
it, as a masked sum.

TT-Lang 1.1.6 cannot read a row at an address it loaded: a block cannot be indexed
(`Block.__getitem__` raises "Block indexing is not allowed"), so no data-movement kernel
can turn an index held in L1 into a number; `ttl.copy` takes tensor slices whose bounds
are the kernel's own loop counters and node coordinates; and a TILE_LAYOUT copy moves
whole 32x32 tiles, with no way to place one row of a tile in another row of a block. One
NoC read per gathered row is therefore not expressible. What is expressible, and exact,
is the matrix engine's gather: `onehot(idx) @ table`, where `onehot[r, j] = (j ==
idx[r])` compares the indices (a column) with the table's row numbers 0..V-1 (a row
vector Loom adds as an input, as for argmax). Each product has one nonzero term, so the
result is the table's row, bit for bit. Every block reads the whole gathered dim of the
table (V rows of its column block) and spends 2·rows·V·cols flops: the model costs the
table's load, the compares and the matmul as those ops, and the solver refuses a table
whose rows do not fit L1 with the block.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from loom.frontend.indices import IndexOps
from loom.frontend.scope import Scope, node_line
from loom.ir.geometry import TILE
from loom.ir.integers import converts_by_product
from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    Load,
    Matmul,
    Reduce,
    TensorArg,
    Value,
    Window,
)
from loom.symbolic import Const

NoteLoad = Callable[[Scope, str, tuple[Window, ...]], None]
"""Records a load for the phase rules, as every load does (`MemoryOps._note_load`)."""


class GatherOps(IndexOps):
    """Row gathers by loaded indices."""

    def _gathered(self, scope: Scope, index: list[object]) -> bool:
        """Whether a load's index holds a tile value (indices read from a tensor)."""
        return any(
            isinstance(e, torch.fx.Node) and isinstance(scope.values.get(e), Value) for e in index
        )

    def _gather_rows(
        self,
        node: torch.fx.Node,
        scope: Scope,
        tensor: str,
        index: list[object],
        note_load: NoteLoad,
    ) -> Value | None:
        """`table[idx, cols]`: the rows of a 2-D table at the 1-D indices `idx`, as the
        one-hot matmul the module docstring describes (`note_load` records the table's
        load for the phase rules, as every load does)."""
        shape = self.tensors[tensor].shape
        idx = scope.values.get(index[0]) if isinstance(index[0], torch.fx.Node) else None
        picked = self._pick_from_rows(node, scope, tensor, idx, note_load)
        if picked is not None:
            return picked
        if len(shape) != 2 or not isinstance(idx, Value) or idx.rank != 1 or len(index) != 2:
            self._unsupported(
                node,
                f"a gather from {tensor} by loaded or computed indices other than a row gather",
                "gather whole rows of a 2-D table by a 1-D index tile (`weight[idx[tile_b], "
                "tile_e]`); TT-Lang cannot read an address from a loaded tile, so Loom "
                "gathers rows as a one-hot matmul over the table. To pick one element per "
                "row (a label's logit from a flattened view), select it from the rows the "
                "kernel loads: `torch.where(tile_v.index[None, :] == labels[:, None], "
                "x[tile_n, tile_v], 0.0).sum(-1)`",
            )
        if self.tensors[tensor].dtype == "int32":
            self._unsupported(
                node,
                f"a row gather from the int32 table {tensor}",
                "Loom gathers rows with the matrix engine, which has no int32 mode; gather "
                "from a float table",
            )
        line = node_line(node)
        rows = shape[0]
        if converts_by_product(idx.dtype, "fp32"):  # int32 indices compared in fp32
            idx = self._ew_convert(scope, idx, line)
        column = self._renamed(Value("", (idx.shape[0], Const(1)), "fp32"), f"{idx.name}_col")
        self._emit(scope, ExpandDims(column, idx, 1, line))
        numbers = self._span_index(scope, rows, line)
        onehot = Value("", (idx.shape[0], Const(rows)), "fp32")
        onehot = self._not_equal(
            scope, numbers, column, self._renamed(onehot, f"{tensor}_onehot"), True, line
        )
        window = (
            Window(Const(0), Const(rows)),
            *self._window(node, tensor, [slice(None), index[1]])[1:],
        )
        note_load(scope, tensor, window)
        table = self._renamed(
            Value("", tuple(w.size for w in window), self.tensors[tensor].dtype), f"{tensor}_tile"
        )
        self._emit(scope, Load(table, tensor, window, line))
        picked = self._renamed(Value("", (idx.shape[0], window[1].size), "fp32"), f"{tensor}_rows")
        self._emit(scope, Matmul(picked, onehot, table, line=line))
        result = self._new_value(node)
        return self._emit(scope, Convert(result, picked, line))

    def _pick_constant(
        self, node: torch.fx.Node, scope: Scope, tensor: str, index: list[object], note: NoteLoad
    ) -> Value | None:
        """`x[tile_m, 63]` (`x[63, tile_n]`): a constant index inside a 32x32 tile of one
        of a tensor's last two dims, or None when the load has none. Loom reads whole
        tiles, so the load reads the tile that holds the element (a window of 32 at the
        tile's edge) and picks it out: `sum(x[tile_m, 32:64] * (0..31 == 31))` along that
        dim, one nonzero term per sum (exact for finite values). The value keeps one dim
        (a column of one value per row, or a row), as an index on a tile edge does."""
        shape = self.tensors[tensor].shape
        rank = len(shape)
        inside = [
            (pos, e % shape[pos])
            for pos, e in enumerate(index)
            if pos >= rank - 2
            and isinstance(e, int)
            and not isinstance(e, bool)
            and -shape[pos] <= e < shape[pos]
            and (e % shape[pos]) % TILE
        ]
        if not inside:
            return None
        result = self._new_value(node)
        if len(inside) > 1 or result.rank != 1 or len(index) != rank:
            self._unsupported(
                node,
                f"index {index[inside[0][0]]} of {tensor} inside a {TILE}x{TILE} tile, giving "
                f"a rank-{result.rank} value",
                "a constant index inside a tile is compiled where the value keeps one dim of "
                "a tile (`x[tile_m, 63]`, `x[tile_b.begin, tile_m, 63]`); a tile holds no "
                "0-d value: read the element with its neighbours (`x[..., tile_k]`) and "
                "select it there, or pass it as its own tensor",
            )
        (pos, at), line = inside[0], node_line(node)
        start = at - at % TILE
        width = min(TILE, shape[pos] - start)
        sliced = [slice(start, start + width) if p == pos else e for p, e in enumerate(index)]
        window = self._window(node, tensor, sliced)
        note(scope, tensor, window)
        last = pos == rank - 1
        wide = (result.shape[0], Const(width)) if last else (Const(width), result.shape[0])
        tile = self._renamed(Value("", wide, self.tensors[tensor].dtype), f"{tensor}_tile")
        self._emit(scope, Load(tile, tensor, window, line))
        numbers = self._span_index(scope, width, line, column=not last)
        hit = self._renamed(Value("", numbers.shape, "fp32"), f"{tensor}_hit")
        hit = self._not_equal(scope, numbers, float(at - start), hit, True, line)
        kept = self._ew(scope, "mul", (tile, hit), Value("", wide, "fp32"), line, "picked")
        return self._emit(scope, Reduce(result, "sum", kept, 1 if last else 0, line))

    def _ew_convert(self, scope: Scope, idx: Value, line: int) -> Value:
        """The int32 indices as fp32 (exact below 2^24, as Loom's index values are)."""
        out = self._renamed(Value("", idx.shape, "fp32"), f"{idx.name}_fp32")
        self._emit(scope, Convert(out, idx, line))
        return out

    def _pick_from_rows(
        self,
        node: torch.fx.Node,
        scope: Scope,
        tensor: str,
        idx: object,
        note_load: NoteLoad,
    ) -> Value | None:
        """`flat[tile_n.index * v + labels]` on `flat = x.view(-1)` of an [n, v] tensor:
        the element `x[r, labels[r]]` of each row of the tile, selected from the row
        (`sum(x[tile_n, :] * (0..v-1 == labels))`, the load shared with the kernel's own
        read of those rows); None when the load is not of that form."""
        base = self._flattened(node, tensor)
        if base is None or not isinstance(idx, Value):
            return None
        v = self.tensors[base].shape[1]
        found = self._row_offset_plus(scope, idx, v)
        if found is None:
            return None
        bid, column = found
        line = node_line(node)
        window = (Window(self.block_begin[bid], self.block_exprs[bid]), Window(Const(0), Const(v)))
        dtype = self.tensors[base].dtype
        note_load(scope, base, window)  # the kernel's own read of the rows shares it
        row = self._renamed(Value("", tuple(w.size for w in window), dtype), f"{base}_tile")
        self._emit(scope, Load(row, base, window, line))
        col = self._renamed(Value("", (column.shape[0], Const(1)), "fp32"), f"{column.name}_col")
        self._emit(scope, ExpandDims(col, column, 1, line))
        numbers = self._span_index(scope, v, line)
        hit = self._renamed(Value("", row.shape, "fp32"), f"{base}_hit")
        hit = self._not_equal(scope, numbers, col, hit, True, line)
        kept = self._ew(scope, "mul", (row, hit), Value("", row.shape, "fp32"), line, "picked")
        result = self._new_value(node)
        return self._emit(scope, Reduce(result, "sum", kept, 1, line))

    def _flattened(self, node: torch.fx.Node, tensor: str) -> str | None:
        """The 2-D kernel argument `tensor` flattens (`x.view(-1)` in the host code), or
        None."""
        val = self.bound.host_function.tensor_to_origin
        mine = [t for t, o in val.items() if getattr(o, "name", None) == tensor]
        base = getattr(mine[0], "_base", None) if mine else None
        origin = val.get(base) if base is not None else None
        name = getattr(getattr(origin, "origin", origin), "name", None)
        if name is None or base is None or base.dim() != 2 or not base.is_contiguous():
            return None
        if name not in self.tensors:
            dtype = self._dtype(base, node)
            shape = (int(base.shape[0]), int(base.shape[1]))
            self.tensors[name] = TensorArg(name, shape, dtype, "input")
        return str(name)

    def _row_offset_plus(self, scope: Scope, idx: Value, v: int) -> tuple[int, Value] | None:
        """(the rows tile, the column) of `tile_n.index * v + column`, or None."""
        ops = {op.result.name: op for op in scope.ops if isinstance(op, Elementwise | Convert)}

        def source(x: Value | float) -> Elementwise | None:
            """The elementwise op that computed `x`, through its conversions (`tile.index
            * v` is int32 in torch, made fp32 again to add the labels)."""
            op = ops.get(x.name) if isinstance(x, Value) else None
            while isinstance(op, Convert):
                op = ops.get(op.operand.name)
            return op

        add = source(idx)
        if add is None or add.op != "add" or len(add.operands()) != 2:
            return None
        for offset, column in (add.args, add.args[::-1]):
            mul = source(offset)
            if mul is None or mul.op != "mul" or float(v) not in mul.args:
                continue
            (rows,) = mul.operands()
            bid = self.index_loads.get(rows.name)
            if bid is not None and isinstance(column, Value) and column.rank == 1:
                return bid, column
        return None
