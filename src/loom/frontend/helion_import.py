"""Convert a bound Helion kernel into a TileProgram.

Helion is used as the parser and type checker: `kernel.bind(args)` traces the device code
into FX graphs (one per loop body) whose nodes carry fake tensors with symbolic tile
shapes. The importer walks those graphs and rebuilds the block program with Loom's own
symbols, named after the Helion loop variables (`tile_m`, `tile_n`, ...).

Loom compiles whole tiles only: every tile size must divide its extent (the model adds
that constraint), so Helion's ragged-tile masks (`_mask_to`) are no-ops here.

Two Helion constructs that synchronise blocks become block-local forms: `hl.atomic_add`
from a split grid axis is a gather of the partials to one block (a split reduction), and
phases separated by `hl.barrier` on the same grid run in order on each core, a later
phase reading its own block's tiles from the earlier phase's values. A later phase that
reads tiles other blocks wrote needs a grid-wide barrier: each phase is then imported on
its own (`phase=`) and becomes a launch of its own (see `loom.frontend.importer`).

The handlers of the FX nodes live in one module per family of constructs, each a mixin of
`loom.frontend.core.ImporterCore` with its own handler table: `symbols` (the tile
symbols), `memory` (loads, stores, views), `indices` (tile offsets and index vectors),
`matmul`, `elementwise` (with conversions and fills), `reductions`, `control` (inner
loops, conditions), `sync` (barrier phases, split reductions) and `views` (a last dim
split in halves or merged back; its `permute`, `clone` and `.to()` fall back to the
other tables' for plain values). This module joins them
into :class:`HelionImporter` and assembles the TileProgram.
"""

from __future__ import annotations

from helion._compiler.device_ir import RootGraphInfo

from loom.frontend.control import ControlOps
from loom.frontend.elementwise import ElementwiseOps
from loom.frontend.indices import without_unused_index_loads
from loom.frontend.leading import drop_dead
from loom.frontend.matmul import MatmulOps
from loom.frontend.memory import MemoryOps
from loom.frontend.partials import lift_block_rows
from loom.frontend.reductions import ReductionOps
from loom.frontend.scope import Handler, Scope
from loom.frontend.symbols import SymbolOps
from loom.frontend.sync import SyncOps
from loom.frontend.views import ViewOps
from loom.ir.integers import READS
from loom.ir.tile import Load, TensorArg, TileProgram, walk


class HelionImporter(
    SymbolOps, SyncOps, ControlOps, MemoryOps, MatmulOps, ElementwiseOps, ReductionOps, ViewOps
):
    """One-shot converter; call :meth:`run` inside the bound kernel's environment."""

    def handler_table(self) -> dict[object, Handler]:
        table = {
            **super().handler_table(),
            **self.memory_handlers(),
            **self.index_handlers(),
            **self.matmul_handlers(),
            **self.elementwise_handlers(),
            **self.reduction_handlers(),
            **self.control_handlers(),
            **self.sync_handlers(),
        }
        return {**table, **self.view_handlers(table)}

    # ----- entry ----------------------------------------------------------------------
    def run(self) -> TileProgram:
        self._scan_gathers()
        self._make_symbols()
        grid_ids = self.device_ir.grid_block_ids
        if self.only_phase is not None:  # a launch of its own, on its own grid
            grid = tuple(self._grid_axis(bid) for bid in grid_ids[self.only_phase])
        else:
            grid = tuple(self._grid_axis(bid) for bid in grid_ids[0])
            for later in grid_ids[1:]:
                self._same_grid(grid_ids[0], later)
        roots = [g for g in self.device_ir.graphs if isinstance(g, RootGraphInfo)]
        scope = self.root_scope = Scope()
        for phase, root in enumerate(roots):
            self.phase = phase
            if self.only_phase is None or phase == self.only_phase:
                self._convert_graph(root, scope, inputs=())
        if len(roots) > 1:
            scope.ops = list(self._drop_scratch(tuple(scope.ops)))
        body = without_unused_index_loads(drop_dead(tuple(scope.ops), self.superseded))
        loaded = {op.tensor for op in walk(body) if isinstance(op, Load)}
        args = tuple(
            TensorArg(t.name, t.shape, t.dtype, "output" if t.name in self.stored else "input")
            for t in self.tensors.values()
            if t.name in loaded or t.name in self.stored or t.name not in self._index_inputs()
        )
        args, body = lift_block_rows(args, body, frozenset(self.block_rows))
        notes = tuple(
            f"{name} ({dtype}) is {READS[str(dtype)].how}"
            if name in self.read_indices
            else f"{name} ({dtype}) holds argmax/argmin indices as fp32 (exact below 2^24)"
            for name, dtype in self.index_tensors.items()
        )
        return TileProgram(
            name=self.name,
            args=args,
            grid=grid,
            body=body,
            source_file=self.source_file,
            notes=notes,
        )
