"""A launch laid out on the core grid: the lowering's state, tile ranges and masks.

The first layer of the lowering of one launch (`lower.py`): the tile range its guard
rectangle touches, the core grid and tile-loop indices (core (y, x) takes tiles
(r0 + y + GY*wy, c0 + x + GX*wx)), the constant table with the guard's mask tiles and
their complements, and which tiles carry a mask. `lower_deliver.py` and
`lower_streams.py` build the streams on top of it.
"""

from __future__ import annotations

from loom.arch import Arch
from loom.cuda.consts import ConstSpec
from loom.cuda.physical import Physical, PhysKernel
from loom.cuda.rows import band_columns, edge_row, shard_width, wide_operands, widen
from loom.cuda.tileflow import FlowKernel, block_refs
from loom.cuda.tileplan import TILE, TilePlan
from loom.ir.program import CORE_X, CORE_Y, BinaryExpr, CExpr, FillExpr, PipeNet
from loom.symbolic import BoolConst, Cond, Expr, Sym, as_expr, disj, select


class LaunchLayout:
    """The state of one launch's lowering, and its layout on the core grid."""

    def __init__(self, phys: Physical, pk: PhysKernel, env: dict[str, int], arch: Arch) -> None:
        self.phys, self.pk, self.env, self.arch = phys, pk, env, arch
        self.flow: FlowKernel = pk.task.flow
        self.plan: TilePlan = phys.task.flow.plan
        self.dtype = phys.precision
        self.consts: list[ConstSpec] = []
        self.const_index: dict[str, int] = {}
        self.shapes: dict[str, tuple[int, int]] = {}
        """Block shapes (rows, cols in tiles) of the interchanged contraction's buffers."""
        self.nets: list[PipeNet] = []
        self.multicasts: dict[str, int] = {}
        self.conversions: list[str] = []
        self.forwarded: tuple[str, ...] = ()
        self.busiest_cut_rows = 0
        self.busiest_cut_tiles = 0
        self.busiest_cut_first = 0
        self.row_halos: set[str] = set()
        """task.streaming=row: halo tiles patched into a shard row's column shift."""
        self.cut: Cond = BoolConst(False)
        """Which tiles (shard rows) carry a mask."""
        self.mask_col: Expr = as_expr(0)
        self.kr: Expr = as_expr(0)
        """Row kind of the current tile: 0 first, 1 last, 2 inner row of the range."""
        self.only_on: dict[str, tuple[int, int, int, int]] = {}
        """Constant frames read only by the cores where the condition holds (a sender's
        edge operator): delivered to and held by those cores alone."""
        """Halo patches converted by their senders (or, noted, by the receivers here)."""
        """Deliveries realized as multicasts (for the notes)."""

    # ----- layout ------------------------------------------------------------------------
    def layout(self, r0: int, r1: int, c0: int, c1: int) -> tuple[int, int]:
        """Lay the launch's rows [r0, r1) x cols [c0, c1) out on the core grid: tile
        ranges, grid, tile-loop indices, constant table, masks. Returns the (widened)
        tile rows and columns of the range."""
        k = self.flow.tile
        self.rect = (r0, r1, c0, c1)
        self.tr = (r0 // TILE, (r1 - 1) // TILE)
        self.tc = (c0 // TILE, (c1 - 1) // TILE)
        nr, nc = self.tr[1] - self.tr[0] + 1, self.tc[1] - self.tc[0] + 1
        gy, gx = min(nr, self.arch.grid_y), min(nc, self.arch.grid_x)
        rd = k.reduction
        self.blocked = rd is not None and rd.interchange
        if self.blocked:
            gy = max(d for d in range(1, gy + 1) if nr % d == 0)
            gx = max(d for d in range(1, gx + 1) if nc % d == 0)
            self.block = (nr // gy, nc // gx)
        self.row = self.phys.task.streaming == "row"
        self.width = 1
        """Tiles per shard row (task.streaming=row: a core owns W contiguous columns)."""
        if self.row:
            nc, gx = self.shard_columns(nc, gx)
        self.grid = (gy, gx)
        self.even = nr % gy == 0 and nc % gx == 0
        """Every core runs every tile-loop trip (multicast groups stay in step)."""
        self.wy = Sym("wy", 0, max(0, -(-nr // gy) - 1), 1, "index")
        self.wx = Sym("wx", 0, 0 if self.row else max(0, -(-nc // gx) - 1), 1, "index")
        self.r: Expr = self.tr[0] + CORE_Y + gy * self.wy
        self.c: Expr = self.tc[0] + CORE_X + gx * self.wx
        if self.row:
            self.c = self.tc[0] + CORE_X * self.width
        for c in self.flow.consts:
            arg = c.arg.eval(self.env)
            if c.kind.endswith("select"):
                arg %= TILE
            self.add_const(c.name, ConstSpec(c.kind, arg))
        self.masks()
        self.expr = self.flow.expr
        if self.row:
            self.row_masks()
        self.row_held = self.forwarded_names() if k.forwarded else ()
        """Deliveries held for a whole tile-row trip (a fused launch's factor column)."""
        return nr, nc

    def forwarded_names(self) -> tuple[str, ...]:
        """The deliveries of a fused launch's forwarded factor column (`X[i][t + e]`)."""
        k = self.flow.tile
        return tuple(
            sorted(
                {
                    o.name
                    for o in self.flow.operands
                    for ld in k.forwarded
                    if o.array == ld.array and o.row.base == "r" and o.col.elem == ld.col
                }
            )
        )

    def shard_columns(self, nc: int, gx: int) -> tuple[int, int]:
        """task.streaming=row: W = ceil(nc / gx) contiguous tile columns per core, the
        range widened to gx * W tiles inside the array (the added tiles are masked out,
        so they keep their values; see rows.shard_width). Returns the (widened) tile
        columns and gx."""
        cols = self.plan.array(self.flow.tile.target).cols // TILE
        w, gx = shard_width(nc, gx, cols)
        start = min(self.tc[0], cols - gx * w)
        self.tc = (start, start + gx * w - 1)
        self.width = w
        return gx * w, gx

    def row_cut_count(self) -> int:
        """Tiles of the shard rows that carry a mask (task.streaming=row)."""
        w, gx = self.width, self.grid[1]
        r0, r1 = self.rect[:2]
        cols = range(self.tc[0], self.tc[1] + 1)
        cut_shards = sum(
            any(self.col_span(t) != (0, TILE) for t in cols[x * w : (x + 1) * w]) for x in range(gx)
        )
        cut, partial_rows = 0, 0
        for r in range(self.tr[0], self.tr[1] + 1):
            whole = self.plan.predicates == "all"
            whole = (
                whole or (r == self.tr[0] and r0 % TILE > 0) or (r == self.tr[1] and r1 % TILE > 0)
            )
            cut += w * (gx if whole else cut_shards)
            partial_rows += whole
        rows = -(-(self.tr[1] - self.tr[0] + 1) // self.grid[0])
        self.busiest_cut_rows = rows if cut_shards else min(rows, partial_rows)
        self.busiest_cut_tiles = self.busiest_cut_rows * w  # one-tile shards: column cost
        self.busiest_cut_first = self.busiest_cut_rows  # one pass per tile-row trip
        return cut

    def cut_count(self, nr: int, nc: int) -> int:
        if self.row:
            return self.row_cut_count()
        gy, gx = self.grid
        if isinstance(self.cut, BoolConst):
            self.busiest_cut_tiles = -(-nr // gy) * -(-nc // gx) if self.cut.value else 0
            self.busiest_cut_first = -(-nr // gy) if self.cut.value else 0
            return nr * nc if self.cut.value else 0
        r0, r1, c0, c1 = self.rect
        rows = {self.tr[0]} if r0 % TILE else set()
        rows |= {self.tr[1]} if r1 % TILE else set()
        cols = {self.tc[0]} if c0 % TILE else set()
        cols |= {self.tc[1]} if c1 % TILE else set()
        for y in range(gy):  # core (y, x) owns tile rows tr0 + y + gy*i, columns likewise
            own_r = range(self.tr[0] + y, self.tr[1] + 1, gy)
            cut_r = sum(r in rows for r in own_r)
            for x in range(gx):
                own_c = range(self.tc[0] + x, self.tc[1] + 1, gx)
                cut_c = sum(c in cols for c in own_c)
                n = cut_r * len(own_c) + cut_c * len(own_r) - cut_r * cut_c
                if n > self.busiest_cut_tiles:  # its first passes: tile column tc0 + x
                    self.busiest_cut_tiles = n
                    self.busiest_cut_first = len(own_r) if own_c[0] in cols else cut_r
        return len(rows) * nc + len(cols) * nr - len(rows) * len(cols)

    def frames(self) -> tuple[str, ...]:
        """Constant buffers held for the whole launch (not the per-tile masks, nor the
        selectors a sunk guard delivers per tile)."""
        sunk = {n for n, _ in self.flow.sunk}
        held = [c for c in self.const_index if c not in ("mask", "nmask") and c not in sunk]
        if self.row:  # only what the shard-row expression reads
            used = block_refs(self.expr)
            held = [c for c in held if c in used]
        return tuple(held)

    def col_span(self, t: int) -> tuple[int, int]:
        """Active columns of tile column `t` (empty for the tiles a shard adds)."""
        lo, hi = _span(self.rect[2], self.rect[3], t)
        return (lo, hi) if lo < hi else (0, 0)

    def cwidth(self, name: str) -> int:
        return self.shapes.get(name, (1, 1))[1]

    def row_masks(self) -> None:
        """task.streaming=row: the expression on 1xW blocks, and per-column tables of the
        masks, their complements and the column-sunk selectors, from which a core reads
        the W entries of its shard in one block (a selective copy per shard row)."""
        f, w = self.flow, self.width
        form = widen(f, f.expr)
        rows = form.repeated
        self.expr = _fills(form.expr, 1, w)
        for o in f.operands:
            if o.name in wide_operands(f):
                self.shapes[o.name] = (1, w)
        for n in ("mask", "nmask", "out"):
            self.shapes[n] = (1, w)
        r0, r1, _, _ = self.rect
        row_spans = [_span(r0, r1, self.tr[0]), _span(r0, r1, self.tr[1]), (0, TILE)]
        cols = range(self.tc[0], self.tc[1] + 1)
        nc = len(cols)
        base = len(self.consts)
        for kind in ("mask", "nmask"):
            for rr in row_spans:
                for t in cols:
                    self.consts.append(ConstSpec(kind, 0, rr, self.col_span(t)))
        self.mask_col = base + nc * self.kr + (self.c - self.tc[0])
        self.nmask_offset = 3 * nc
        self.const_index["mask"] = base
        self.const_index["nmask"] = base + 3 * nc
        partial_r = [self.r.eq(self.tr[0])] if r0 % TILE else []
        partial_r += [self.r.eq(self.tr[1])] if r1 % TILE else []
        gx = self.grid[1]
        partial_c = [
            CORE_X.eq(x)
            for x in range(gx)
            if any(self.col_span(t) != (0, TILE) for t in cols[x * w : (x + 1) * w])
        ]
        if not (isinstance(self.cut, BoolConst) and self.cut.value):
            self.cut = disj(*partial_r, *partial_c)
        for name, axis in f.sunk:
            if axis != "col":
                continue
            spec = self.consts[self.const_index[name]]
            self.sunk_col[name] = len(self.consts) + (self.c - self.tc[0])
            for t in cols:
                self.consts.append(ConstSpec(spec.kind, spec.arg, (0, TILE), self.col_span(t)))
            self.shapes[name] = (1, w)
        sunk = {n for n, _ in f.sunk}
        for name in sorted(rows - sunk):  # a right operator repeated along the row
            spec = self.consts[self.const_index[name]]
            self.add_const(f"{name}_w", spec)
            self.consts.extend([spec] * (w - 1))
            self.shapes[f"{name}_w"] = (1, w)
        for sh in form.shifts:  # a column shift: one band operator and 1xW edge rows
            self.row_halos |= {h for _, h, _, _ in sh.edges}
            ops = {c: self.consts[self.const_index[c]] for _, c in sh.terms}
            first, *rest = band_columns(sh, ops, w)
            self.add_const(sh.band, first)
            self.consts.extend(rest)
            self.shapes[sh.band] = (w, w)
            for name, _, d, c in sh.edges:
                first, *rest = edge_row(d, ops[c], w)
                self.add_const(name, first)
                self.consts.extend(rest)
                self.shapes[name] = (1, w)

    def add_const(self, name: str, spec: ConstSpec) -> None:
        self.const_index[name] = len(self.consts)
        self.consts.append(spec)

    def masks(self) -> None:
        """Nine mask tiles (row kind x column kind) and their complements."""
        r0, r1, c0, c1 = self.rect
        rows = [_span(r0, r1, self.tr[0]), _span(r0, r1, self.tr[1]), (0, TILE)]
        cols = [_span(c0, c1, self.tc[0]), _span(c0, c1, self.tc[1]), (0, TILE)]
        self.mask_base = len(self.consts)
        for kind in ("mask", "nmask"):
            for rr in rows:
                for cc in cols:
                    self.consts.append(ConstSpec(kind, 0, rr, cc))
        self.const_index["mask"] = self.mask_base
        self.const_index["nmask"] = self.mask_base + 9
        partial_r = [self.r.eq(self.tr[0])] if r0 % TILE else []
        partial_r += [self.r.eq(self.tr[1])] if r1 % TILE else []
        partial_c = [self.c.eq(self.tc[0])] if c0 % TILE else []
        partial_c += [self.c.eq(self.tc[1])] if c1 % TILE else []
        self.cut = (
            BoolConst(True) if self.plan.predicates == "all" else disj(*partial_r, *partial_c)
        )
        kr = select(self.r.eq(self.tr[0]), 0, select(self.r.eq(self.tr[1]), 1, 2))
        kc = select(self.c.eq(self.tc[0]), 0, select(self.c.eq(self.tc[1]), 1, 2))
        self.mask_col = self.mask_base + 3 * kr + kc
        self.nmask_offset = 9
        self.kr = kr
        self.sunk_col: dict[str, Expr] = {}
        """Per-tile column of a sunk selector: its three variants (first, last, inner
        tile of the range along its axis), each masked to that tile's active span."""
        for name, axis in self.flow.sunk:
            base = self.consts[self.const_index[name]]
            self.sunk_col[name] = len(self.consts) + (kc if axis == "col" else kr)
            for span in cols if axis == "col" else rows:
                self.consts.append(
                    ConstSpec(
                        base.kind,
                        base.arg,
                        span if axis == "row" else (0, TILE),
                        span if axis == "col" else (0, TILE),
                    )
                )


def _span(lo: int, hi: int, tile: int) -> tuple[int, int]:
    a, b = tile * TILE, tile * TILE + TILE
    return (max(lo, a) - a, min(hi, b) - a)


def _fills(e: CExpr, rows: int, cols: int) -> CExpr:
    """Scalar fills reshaped to the block they combine with."""
    match e:
        case FillExpr(value=v):
            return FillExpr(v, rows, cols)
        case BinaryExpr(op=op, lhs=a, rhs=b):
            return BinaryExpr(op, _fills(a, rows, cols), _fills(b, rows, cols))
    return e
