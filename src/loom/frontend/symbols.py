"""Loom's symbols for the kernel's tiles: one `Sym` per Helion block, named after its loop
variable (`tile_m`; `tile_d0` for an unnamed grid dim), bounded by its extent and aligned
to the 32x32 tile where it tiles one of a tensor's last two dims; each grid axis also gets
an index symbol (`tile_m_id`)."""

from __future__ import annotations

import torch
from helion._compiler.compile_environment import BlockSizeInfo, FixedBlockSizeSource
from helion.language import _tracing_ops, memory_ops, tile_ops

from loom.errors import FrontendError
from loom.frontend.core import ImporterCore
from loom.frontend.language import gather
from loom.frontend.partials import pinned_size
from loom.ir.geometry import TILE
from loom.ir.tile import GridAxis
from loom.symbolic import Const, Sym

TILE_ALIGN = TILE


class SymbolOps(ImporterCore):
    """Symbols of the blocks, made before any node is converted."""

    def _scan_gathers(self) -> None:
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.op == "call_function" and node.target is gather:
                    rows = node.meta["val"].shape[0]
                    count_id = self.env.get_block_id(rows)
                    tile_id = self.env.get_block_id(node.args[0].meta["val"])
                    if count_id is not None and tile_id is not None:
                        self.gather_counts[count_id] = tile_id

    def _tile_positions(self) -> dict[int, bool]:
        """Block ids used in one of the last two dims of some load or store."""
        in_tile_dims: dict[int, bool] = {}
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.op != "call_function" or node.target not in (
                    memory_ops.load,
                    memory_ops.store,
                ):
                    continue
                index = node.args[1]
                for pos, entry in enumerate(index):
                    bid = self._block_of(entry)
                    if bid is not None:
                        tiled = pos >= len(index) - 2
                        in_tile_dims[bid] = in_tile_dims.get(bid, False) or tiled
        return in_tile_dims

    def _shifted_blocks(self) -> set[int]:
        """Blocks whose `tile.index` shifted by a constant indexes a masked load
        (`hl.load(y, [tile_m, tile_n.index - n1], extra_mask=...)`): such a block holds
        one 32-wide tile of the dim, so each block's window lies wholly inside the tensor
        or wholly outside it (see `loom.frontend.indices`)."""
        found: set[int] = set()
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.target is not memory_ops.load or len(node.args) < 3 or node.args[2] is None:
                    continue
                for entry in node.args[1]:
                    if isinstance(entry, torch.fx.Node) and isinstance(
                        entry.meta.get("val"), torch.Tensor
                    ):
                        found |= self._index_blocks(entry)
        return found

    def _index_blocks(self, node: torch.fx.Node) -> set[int]:
        """The blocks whose `tile.index` a computed index reads."""
        found: set[int] = set()
        stack, seen = [node], set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n.target is tile_ops.tile_index:
                bid = self._block_of(n.args[0])
                if bid is not None:
                    found.add(bid)
                continue
            stack.extend(a for a in n.all_input_nodes)
        return found

    def _shaping_blocks(self) -> set[int]:
        """Blocks whose size a host tensor's shape is computed from (`x.new_empty([cdiv(m,
        m_block), n])`: one row per block, `loom.frontend.partials`)."""
        origins = self.bound.host_function.expr_to_origin
        found: set[int] = set()
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.op != "call_function" or node.target is not _tracing_ops._host_tensor:
                    continue
                for dim in node.meta["val"].shape:
                    expr = getattr(getattr(dim, "node", None), "expr", None)
                    for sym in getattr(expr, "free_symbols", ()):
                        origin = getattr(origins.get(sym), "origin", None)
                        if type(origin).__name__ == "BlockSizeOrigin":
                            found.add(int(origin.block_id))  # type: ignore[union-attr]
        return found

    def _make_symbols(self) -> None:
        tiled = self._tile_positions()
        shifted = self._shifted_blocks()
        for bid in self._shaping_blocks():  # a host tensor's shape depends on it
            info = self.env.block_sizes[bid]
            extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
            self.pinned[bid] = pinned_size(extent)
        by_name: dict[str, Sym] = {}
        for info in self.env.block_sizes:
            bid = info.block_id
            if not info.debug_names:
                size = info.size if isinstance(info.size, int) else self._with_pinned(info.size)
                if isinstance(info.var, int):
                    self.block_exprs[bid] = Const(info.var)
                elif info.reduction and size is not None:
                    self.block_exprs[bid] = Const(size)  # a full-row `:` slice
                if bid not in self.block_exprs and not self._is_grid_block(bid):
                    continue
            name = sorted(info.debug_names)[0] if info.debug_names else self._grid_name(bid)
            if bid in self.block_exprs:
                continue
            if name in by_name:
                self.block_exprs[bid] = by_name[name]
                continue
            sym = self._block_sym(info, name, tiled.get(bid, True), bid in shifted)
            by_name[name] = sym
            self.block_exprs[bid] = sym
        for count_id, tile_id in self.gather_counts.items():
            self.block_exprs[count_id] = self._num_tiles(tile_id)

    def _block_sym(self, info: BlockSizeInfo, name: str, tiled: bool, shifted: bool) -> Sym:
        """The symbol of a block size the solver may choose: fixed where a host tensor's
        shape, a tunable or a shifted masked load needs one value, else free in steps of
        a tile (of 1 where the block indexes no tile dim)."""
        bid = info.block_id
        upper = info.size if isinstance(info.size, int) else None
        if upper is None:
            upper = self._enclosing_extent(bid)
        fixed_size = getattr(info.block_size_source, "value", None)
        if bid in self.pinned:  # fixed before solving: a host tensor's shape needs it
            return Sym(name, self.pinned[bid], self.pinned[bid], 1, "tile")
        if isinstance(info.block_size_source, FixedBlockSizeSource) and isinstance(fixed_size, int):
            # a block size computed from a tunable (`next_power_of_2(cdiv(k,
            # split_k))`) is the split Loom's solver chooses: a free tile below
            fixed = int(fixed_size)
            return Sym(name, fixed, fixed, 1, "tile")
        if shifted and upper >= TILE_ALIGN:
            return Sym(name, TILE_ALIGN, TILE_ALIGN, TILE_ALIGN, "tile")
        align = TILE_ALIGN if tiled else 1
        if upper < align:
            align = 1
        return Sym(name, align, upper, align, "tile")

    def _grid_name(self, bid: int) -> str:
        """`for tile in hl.tile(x.size())` names no dimension: call them tile_d0, tile_d1."""
        for ids in self.device_ir.grid_block_ids:
            if bid in ids:
                return f"tile_d{ids.index(bid)}"
        return f"tile_b{bid}"

    def _grid_axis(self, bid: int) -> GridAxis:
        info = self.env.block_sizes[bid]
        sym = self.block_exprs[bid]
        if not isinstance(sym, Sym) or not isinstance(info.size, int):
            raise FrontendError(
                f"{self.where}: kernel {self.name!r}: grid axis {bid} has no named tile; write "
                "the grid as `for tile_x, tile_y in hl.tile([...])`."
            )
        index = Sym(f"{sym.name}_id", 0, max(info.size - 1, 0), 1, "index")
        self.block_index[bid] = index
        self.block_begin[bid] = index * sym
        return GridAxis(tile=sym, index=index, extent=info.size)
