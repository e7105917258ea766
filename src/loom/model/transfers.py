"""The DRAM and NoC side of each load and store: the transfer specs the stage terms
read (`primitives.dram_read_stage`, `primitives.dram_write_stage`): bytes, readers,
NoC links, a multicast's sends, and where the blocks fall on the DRAM banks."""

from __future__ import annotations

import math

from loom.arch import noc as nocmap
from loom.ir.buffers import TileLayout
from loom.ir.candidate import CopyPlan
from loom.ir.geometry import TILE
from loom.ir.multicast import multicast_pipes
from loom.ir.tile import Load, Store, Window
from loom.model import primitives as prim
from loom.model.core import HegCore
from loom.model.domains import grid_domain
from loom.symbolic import Cond, Expr

_NARROW: dict[tuple[object, ...], tuple[tuple[Cond, float], ...]] = {}
"""`Transfers.narrow_reads` by the pattern it depends on (many candidates share it)."""


class Transfers(HegCore):
    """The transfer specs of one candidate's loads and stores."""

    def load_spec(self, op: Load) -> prim.TransferSpec:
        plan = self.copy_of(op)
        vb = self.b.buffer_of(op.result.name)
        assert vb is not None
        tiles = vb.layout.tiles
        group = plan.area[0] * plan.area[1]
        area = f" {plan.area}" if group > 1 else ""
        what = f"load {op.tensor} (line {op.line}, {plan.mode}{area})"
        engine = plan.engine or vb.producer
        return prim.TransferSpec(
            what,
            self.tile_bytes(vb.dtype),
            tiles,
            max(self.cores // group, 1),
            plan.mode == "multicast",
            engine,
            self.load_links(plan, engine),
            self.bank_spread(op.tensor, op.window, vb.layout),
            nocmap.load_read_link_load(
                self.arch,
                engine,
                (self.c.mapping.cores_y, self.c.mapping.cores_x),
                plan.mode,
                plan.area,
            ),
            self.sends(plan.area, engine) if plan.mode == "multicast" else (),
            self.narrow_reads(op, plan, engine),
        )

    @staticmethod
    def sends(area: tuple[int, int], engine: str) -> tuple[prim.SendSpec, ...]:
        """The sends of one multicast group's sender, as the lowering realizes them
        (`multicast_pipes`, the sender on the corner its engine's NoC enters from):
        receivers and grid steps to the farthest of each pipe."""
        row, rest = multicast_pipes(area, area, engine == "writer")
        out = []
        for pipe in (*row, *rest):
            dsts = [c for c in pipe.receivers if c != pipe.src]
            span = max(abs(y - pipe.src[0]) + abs(x - pipe.src[1]) for y, x in dsts)
            out.append(prim.SendSpec(len(dsts), span))
        return tuple(out)

    def bank_spread(
        self, tensor: str, window: tuple[Window, ...], layout: TileLayout
    ) -> prim.BankSpread:
        """Where the concurrent cores' blocks of one access fall on the DRAM banks: the
        grid axes in the column (row) offsets spread the cores over that many distinct
        column (row) blocks; loop indices are the same on every core at once. A grid axis
        in a batch dimension moves a block by whole batch entries, each `unit` tile rows;
        when `unit` is a multiple of nb / period, every entry starts on the same banks
        (flash decode's heads of S / 32 rows), so that axis spreads nothing."""
        shape = self.program.arg(tensor).shape
        nb, period = len(self.arch.dram.banks), self.bank_period(tensor)

        def spread(offsets: tuple[Expr, ...]) -> int:
            names = set().union(*(o.free_names() for o in offsets))
            return math.prod(
                self.c.spatial.get(a.tile.name, 1)
                for a in self.program.grid
                if a.index.name in names
            )

        def unit(dim: int) -> int:
            """Tile rows of one entry of batch dimension `dim`."""
            return math.prod(shape[dim + 1 : -2]) * -(-shape[-2] // TILE)

        rows = window[:-1]
        moving = tuple(
            w.offset for i, w in enumerate(rows) if i == len(rows) - 1 or unit(i) % (nb // period)
        )
        return prim.BankSpread(
            rows=layout.tile_rows,
            period=period,
            col_blocks=spread((window[-1].offset,)),
            row_blocks=spread(moving),
        )

    def bank_period(self, tensor: str) -> int:
        """gcd(C, nb) for a tensor C tiles wide: its rows start on the multiples of it
        (`prim.BankSpread`)."""
        cols = -(-self.program.arg(tensor).shape[-1] // TILE)
        return math.gcd(cols, len(self.arch.dram.banks))

    def narrow_reads(self, op: Load, plan: CopyPlan, engine: str) -> tuple[tuple[Cond, float], ...]:
        """The busiest read link of a block narrower than the banks' period whose
        columns one grid axis alone sets (GEMM's B: its n block, the same at every K
        step). Tile (r, c) is in bank (r·C + c) mod nb, so over its rows the block of
        reader i, W columns from i·W, touches only the banks ≡ i·W + j (mod period),
        j < W (`prim.BankSpread`): its bytes crowd those banks' routes
        (`nocmap.bank_read_peak`) instead of spreading over all of them. One share per
        width W < period in the axis's domain (`domains.grid_domain`), for the first
        wave's blocks (a later wave shifts every reader's banks alike). Wider blocks,
        columns that move with a loop, a period of 1: none."""
        nb, period = len(self.arch.dram.banks), self.bank_period(op.tensor)
        col = op.window[-1]
        grid = next(
            (
                a
                for a in self.program.grid
                if col.offset.key == (a.tile * a.index).key and col.size.key == a.tile.key
            ),
            None,
        )
        if period == 1 or grid is None:
            return ()
        axis, m = grid.tile, self.c.mapping
        split = axis.name in self.c.gather_axes
        pattern = (engine, plan.mode, plan.area, m.levels, split)
        key = (self.arch.key, *pattern, axis.key, grid.extent, period)
        if key not in _NARROW:
            readers = nocmap.load_readers(engine, (m.cores_y, m.cores_x), plan.mode, plan.area)
            index = [(core, m.spatial_index(axis.name, *core)) for core in readers]
            noc = nocmap.NOC_OF_ENGINE.get(engine, 0)
            out = []
            cores = self.c.spatial[axis.name]
            for size in grid_domain(axis, grid.extent, cores, split):
                w = size // TILE
                if w >= period:
                    continue
                banks = [
                    tuple(b for b in range(nb) if (b - first) % period < w)
                    for first in range(period)
                ]
                reads = tuple((core, banks[i * w % period]) for core, i in index)
                out.append((axis.eq(size), nocmap.bank_read_peak(self.arch, noc, reads)))
            _NARROW[key] = tuple(out)
        return _NARROW[key]

    def load_links(self, plan: CopyPlan, engine: str) -> nocmap.LinkLoad:
        """NoC link loads of one load, on the issuing engine's NoC, as lowered."""
        m = self.c.mapping
        return nocmap.load_link_load(
            self.arch, engine, (m.cores_y, m.cores_x), plan.mode, plan.area
        )

    def store_spec(self, op: Store, owners_only: bool) -> prim.TransferSpec:
        vb = self.b.buffer_of(op.value.name)
        assert vb is not None
        tiles = vb.layout.tiles
        writers = self.cores // self.group if owners_only else self.cores
        m = self.c.mapping
        links = (
            ()
            if owners_only
            else nocmap.dram_link_load(
                self.arch, 1, nocmap.all_cores((m.cores_y, m.cores_x)), write=True
            )
        )
        return prim.TransferSpec(
            f"store {op.tensor} (line {op.line})",
            self.tile_bytes(vb.dtype),
            tiles,
            max(writers, 1),
            links=links,
            banks=self.bank_spread(op.tensor, op.window, vb.layout),
        )
