"""A tile's offsets, id and element indices: `tile.begin`, `tile.end` and `tile.id` are
expressions over Loom's symbols, `tile.index` (and argmax's candidates) an index vector
(0..extent-1 in fp32) that Loom adds as a DRAM input and loads like a tensor."""

from __future__ import annotations

import dataclasses

import torch
from helion.language import tile_ops

from loom.frontend.core import ImporterCore
from loom.frontend.scope import Handler, Scope, node_line
from loom.ir.geometry import TILE
from loom.ir.tile import Convert, Elementwise, ForLoop, If, Load, Op, TensorArg, Value, Window, walk
from loom.symbolic import Const, Expr, Sym, maximum


class IndexOps(ImporterCore):
    """Tile offsets and index vectors."""

    def index_handlers(self) -> dict[object, Handler]:
        return {
            tile_ops.tile_begin: self._tile_begin,
            tile_ops.tile_end: self._tile_end,
            tile_ops.tile_id: self._tile_id,
            tile_ops.tile_index: self._tile_index,
        }

    def _tile_block(self, node: torch.fx.Node) -> int:
        """Block id of the tile a `tile.begin/end/id/index` node reads (its argument 0)."""
        bid = self._block_of(node.args[0])
        if bid is None:
            self._unsupported(node, f"{node.target} of a value that is not a tile")
        return bid

    def _tile_begin(self, node: torch.fx.Node, scope: Scope) -> Expr:
        return self.block_begin[self._tile_block(node)]

    def _tile_end(self, node: torch.fx.Node, scope: Scope) -> Expr:
        bid = self._tile_block(node)
        return self.block_begin[bid] + self.block_exprs[bid]

    def _tile_id(self, node: torch.fx.Node, scope: Scope) -> Expr:
        bid = self._tile_block(node)
        if bid not in self.block_index:
            self._unsupported(node, "tile.id of an inner loop")
        return self.block_index[bid]

    def _tile_index(self, node: torch.fx.Node, scope: Scope) -> Value | None:
        """`tile.index`: the element indices of a tile, read from an index vector
        (`<tile>_index`, 0..extent-1 in fp32) that Loom adds as an input in DRAM."""
        bid = self._block_of(node.args[0])
        sym = self.block_exprs.get(bid) if bid is not None else None
        info = self.env.block_sizes[bid] if bid is not None else None
        if bid is None or not isinstance(sym, Sym) or info is None or bid not in self.block_begin:
            self._unsupported(node, "tile.index of a tile without a static extent")
        # a loop over another tile's range (`hl.tile(t.begin, t.end)`) indexes the
        # enclosing axis: its vector spans that axis
        extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
        name = f"{sym.name}_index"
        self.tensors.setdefault(name, TensorArg(name, (int(extent),), "fp32", "input"))
        window = (Window(self.block_begin[bid], sym),)
        result = self._renamed(Value("", (sym,), "fp32"), f"{name}_tile")
        self.index_loads[result.name] = bid
        return self._emit(scope, Load(result, name, window, node_line(node)))

    def _index_column(self, bid: int, node: torch.fx.Node, scope: Scope) -> Value | None:
        """`tile.index.unsqueeze(1)`: the indices as a column (one per row of a tile, the
        layout of a row reduction), read from a column vector `<tile>_col_index` in DRAM:
        a row-vector index cannot be turned into a column on the device."""
        sym = self.block_exprs[bid]
        info = self.env.block_sizes[bid]
        assert isinstance(sym, Sym)
        extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
        name = f"{sym.name}_col_index"
        self.tensors.setdefault(name, TensorArg(name, (int(extent), 1), "fp32", "input"))
        window = (Window(self.block_begin[bid], sym), Window(Const(0), Const(1)))
        result = self._renamed(Value("", (sym, Const(1)), "fp32"), f"{name}_tile")
        return self._emit(scope, Load(result, name, window, node_line(node)))

    def _span_index(self, scope: Scope, n: int, line: int, column: bool = False) -> Value:
        """The element indices 0..n-1 of a full `:` slice of extent n (argmax's
        candidates), read from an index vector Loom adds as the DRAM input `span<n>_index`
        (as a column `span<n>_col_index` where `column`: a row cannot be turned into a
        column on the device)."""
        shape: tuple[int, ...]
        window: tuple[Window, ...]
        if column:
            name, shape = f"span{n}_col_index", (n, 1)
            window = (Window(Const(0), Const(n)), Window(Const(0), Const(1)))
        else:
            name, shape, window = f"span{n}_index", (n,), (Window(Const(0), Const(n)),)
        self.tensors.setdefault(name, TensorArg(name, shape, "fp32", "input"))
        vshape = tuple(Const(d) for d in shape)
        result = self._renamed(Value("", vshape, "fp32"), f"{name}_tile")
        self._emit(scope, Load(result, name, window, line))
        return result

    def _argreduce_block(self, n: Expr) -> tuple[int, int, Expr] | None:
        """(block id, extent of its dim, begin) of the inner-loop tile `n` (an argmax
        over a tile of a looped dim), or None when `n` is no tile of an entered inner
        loop (a grid tile: each block would see only its own tile of the dim)."""
        found = [
            b
            for b, e in self.block_exprs.items()
            if e == n and b in self.block_begin and not self._is_grid_block(b)
        ]
        if not found:
            return None
        bid = found[-1]
        info = self.env.block_sizes[bid]
        extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
        return bid, int(extent), self.block_begin[bid]

    def _tile_indices(self, scope: Scope, bid: int, column: bool, line: int) -> Value:
        """The indices in the tensor of the elements of tile `bid`, as a row (`<tile>_index`)
        or as a column (`<tile>_col_index`), read from an index vector in DRAM."""
        sym = self.block_exprs[bid]
        assert isinstance(sym, Sym)
        info = self.env.block_sizes[bid]
        extent = int(info.size if isinstance(info.size, int) else self._enclosing_extent(bid))
        begin = Window(self.block_begin[bid], sym)
        if column:
            name = f"{sym.name}_col_index"
            shape: tuple[int, ...] = (extent, 1)
            window: tuple[Window, ...] = (begin, Window(Const(0), Const(1)))
            vshape: tuple[Expr, ...] = (sym, Const(1))
        else:
            name, shape, window, vshape = f"{sym.name}_index", (extent,), (begin,), (sym,)
        self.tensors.setdefault(name, TensorArg(name, shape, "fp32", "input"))
        result = self._renamed(Value("", vshape, "fp32"), f"{name}_tile")
        self._emit(scope, Load(result, name, window, line))
        return result

    def _shifted_entries(
        self, node: torch.fx.Node, scope: Scope, tensor: str, index: list[object]
    ) -> tuple[list[object], list[Value]]:
        """The entries `tile.index + c` / `tile.index - c` (a constant c) of a load's
        index as windows shifted by c, and the masks that zero the elements left of the
        tensor. A block of such a tile is one 32-wide tile (`loom.frontend.symbols`) and
        c a multiple of 32, so each block's window lies wholly inside or outside the
        tensor: a window right of it reads the zeros the tensor is padded with, one left
        of it reads the tensor's first tile (the window clamped at 0), which the mask
        `tile.index + c >= 0` zeroes."""
        out: list[object] = list(index)
        masks: list[Value] = []
        for pos, entry in enumerate(index):
            found = self._shifted_index(scope, entry)
            if found is None:
                continue
            bid, shift, indices = found
            size, line = self.block_exprs[bid], node_line(node)
            where = f"the index tile.index {'+' if shift >= 0 else '-'} {abs(shift)} of {tensor}"
            narrow = isinstance(size, Sym) and size.upper == TILE
            if bid not in self.block_index or not narrow or pos != len(index) - 1:
                self._unsupported(
                    node,
                    f"{where} (dim {pos}) other than in the last dim of a masked load",
                    "shift a grid tile's index in the last dim of `hl.load(t, [..., "
                    "tile.index - n1], extra_mask=...)`; other positions computed from tile "
                    "indices are gathers",
                )
            if shift % TILE:
                self._unsupported(
                    node,
                    f"{where} (a shift inside a {TILE}x{TILE} tile)",
                    f"shift by a multiple of {TILE}: Loom reads whole {TILE}x{TILE} tiles, so "
                    "a shifted window must start on a tile edge; pad the tensor on the host",
                )
            offset = self.block_begin[bid] + shift
            if shift < 0:
                offset = maximum(self.block_index[bid] + shift // TILE, 0) * size
                like = Value("", indices.shape, "fp32")
                masks.append(self._ew(scope, "gt", (indices, -shift - 0.5), like, line, "inside"))
            out[pos] = Window(offset, size)
        return out, masks

    def _shifted_index(self, scope: Scope, entry: object) -> tuple[int, int, Value] | None:
        """(block, c, the tile's indices) of an index value `tile.index + c`, or None."""
        value = scope.values.get(entry) if isinstance(entry, torch.fx.Node) else None
        if not isinstance(value, Value):
            return None
        ops = {op.result.name: op for op in scope.ops if isinstance(op, Elementwise | Convert)}

        def source(v: Value) -> Value:
            while isinstance(op := ops.get(v.name), Convert):
                v = op.operand
            return v

        op = ops.get(source(value).name)
        if not isinstance(op, Elementwise) or op.op not in ("add", "sub") or len(op.args) != 2:
            return None
        a, b = op.args
        if op.op == "add" and not isinstance(a, Value):
            a, b = b, a
        if not isinstance(a, Value) or isinstance(b, Value) or not float(b).is_integer():
            return None
        indices = source(a)
        bid = self.index_loads.get(indices.name)
        if bid is None:
            return None
        return bid, int(b) if op.op == "add" else -int(b), indices

    def _index_inputs(self) -> set[str]:
        """Index vectors Loom adds as inputs (`tile.index`, argmax's candidates)."""
        return {name for name in self.tensors if name.endswith("_index")}


def without_unused_index_loads(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    """Drop the `tile.index` loads nothing reads (the row vector of a `tile.index` taken
    as a column, `tile.index.unsqueeze(1)`, which reads its own column vector)."""
    used = {v.name for op in walk(ops) for v in op.operands()}
    used |= {c.next.name for op in walk(ops) if isinstance(op, ForLoop) for c in op.carried}

    def keep(block: tuple[Op, ...]) -> tuple[Op, ...]:
        out: list[Op] = []
        for op in block:
            if isinstance(op, Load) and op.tensor.endswith("_index"):
                if op.result.name not in used:
                    continue
            elif isinstance(op, ForLoop | If):
                op = dataclasses.replace(op, body=keep(op.body))
            out.append(op)
        return tuple(out)

    return keep(ops)
