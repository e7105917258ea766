"""Physical x one launch -> Program: the per-core streams of one kernel launch.

The launch's tile range (the tiles its guard rectangle touches) is spread over a core
grid of at most the architecture's size; core (y, x) takes tiles (r0 + y + GY*wy,
c0 + x + GX*wx). Constant frames are delivered once and held for the whole tile loop;
tiles the guard cuts (or every tile, with `predicates: all`) get a mask and its
complement and store `mask * new + nmask * old`, exact for both mask values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loom.arch import Arch
from loom.cuda.consts import ConstSpec, table_rows
from loom.cuda.physical import Physical, PhysKernel
from loom.cuda.rows import band_columns, edge_row, shard_width, wide_operands, widen
from loom.cuda.tileflow import Contraction, FlowKernel, Operand, TileIndex, block_refs
from loom.cuda.tileplan import TILE, TilePlan, format_value, loads
from loom.errors import AnnotationError, CudaSubsetError, InfeasibleError
from loom.ir.multicast import multicast_pipes
from loom.ir.program import (
    CORE_X,
    CORE_Y,
    BinaryExpr,
    BlockRef,
    Buffer,
    CExpr,
    Compute,
    DramTensor,
    FillExpr,
    IfCore,
    Loop,
    MatmulExpr,
    Pipe,
    PipeNet,
    Program,
    ReadDram,
    Receive,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)
from loom.symbolic import BoolConst, Cond, Expr, Sym, as_expr, conj, disj, maximum, minimum, select

CONST = "loom_const"


@dataclass(frozen=True, slots=True)
class LaunchProgram:
    """One launch: its Program, the constant tiles it reads, what it reads and writes."""

    kernel: str
    env: tuple[tuple[str, int], ...]
    program: Program
    consts: tuple[ConstSpec, ...]
    reads: tuple[str, ...]
    writes: str
    tiles: int
    """Output tiles computed."""
    shape: tuple[int, int]
    """Tile rows x tile columns of the launch's range."""
    cut_tiles: int
    """Tiles that carry a mask."""
    multicast: tuple[tuple[str, int], ...] = ()
    """(delivery, cores per multicast group) for deliveries read once per group."""
    const_senders: tuple[int, ...] = ()
    """Held constants each sending core reads and multicasts (they work in parallel);
    empty when every core reads its own."""
    busiest_cut_rows: int = 0
    """task.streaming=row: shard rows that carry a mask on the busiest core."""
    busiest_cut_tiles: int = 0
    """Column streaming: tiles that carry a mask on the core that has the most of them
    (a core takes every grid-th tile row and column, so the range's edge rows and columns
    gather on a few cores; the model charges that core, not the average)."""
    busiest_cut_first: int = 0
    """Of those, the tiles in the first column pass of their tile-row trip."""
    row_held: tuple[str, ...] = ()
    """Deliveries read once per tile-row trip and held across its column passes (a fused
    launch's factor column), not once per tile."""


def lower_launch(
    phys: Physical, key: str, env: Mapping[str, int], arch: Arch
) -> LaunchProgram | None:
    """The Program of launch `key` with host variables `env`; None when its guard is empty."""
    return _Lower(phys, phys.kernel(key), dict(env), arch).program()


class _Lower:
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
    def program(self) -> LaunchProgram | None:  # noqa: C901 - one branch per realization
        k = self.flow.tile
        r0, r1, c0, c1 = k.region.at(self.env)
        if r0 >= r1 or c0 >= c1:
            return None
        self.check_bounds(r0, r1, c0, c1)
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
        if self.blocked:
            assert self.flow.contraction is not None
            if not (isinstance(self.cut, BoolConst) and not self.cut.value):
                raise AnnotationError(
                    f"tileplan.interchange is illegal for `{k.kernel}` here: tiles of its output "
                    "range carry guard masks (or predicates: all), and an interchanged "
                    "reduction updates whole core blocks; drop one of the two annotations."
                )
            self.r = self.tr[0] + CORE_Y * self.block[0]
            self.c = self.tc[0] + CORE_X * self.block[1]
            reader, compute, writer = self.interchanged_streams(self.flow.contraction)
        elif self.flow.contraction is not None:
            if not (isinstance(self.cut, BoolConst) and not self.cut.value):
                raise AnnotationError(
                    f"`{k.kernel}` reduces into tiles that carry guard masks (a guard that cuts "
                    "tiles, or predicates: all); Loom does not mask reductions yet, so keep "
                    "the guard on whole tiles and predicates: boundary."
                )
            reader, compute, writer = self.contraction_streams(self.flow.contraction)
        else:
            reader, compute, writer = self.elementwise_streams()
        if not self.blocked:
            held_reads = tuple(
                self.read(o, in_step=True) for o in self.flow.operands if o.name in self.row_held
            )
            reader = self.tile_loop(reader, held_reads)
            compute = self.tile_loop(compute, hold=self.row_held)
            writer = self.tile_loop(writer)
        if k.forwarded:
            self.check_forwarded(reader)
        const_names = self.frames()
        pre = tuple(
            self.deliver(
                ReadDram(
                    c, CONST, as_expr(0), as_expr(self.const_index[c]), *self.shapes.get(c, (1, 1))
                ),
                self.grid,
                "reader",
                "const",
            )
            if c not in self.only_on
            else self.deliver_rect(
                ReadDram(c, CONST, as_expr(0), as_expr(self.const_index[c]), 1, 1),
                self.only_on[c],
            )
            for c in const_names
        )
        if self.flow.hoisted:
            pre_r, pre_w, compute = self.hoist(compute)
            pre, writer = pre + pre_r, pre_w + writer
        for name, rect in self.only_on.items():  # held only where it is read
            compute = (IfCore(_in_rect(rect), (Wait((name,), compute),), compute),)
        held = tuple(c for c in const_names if c not in self.only_on)
        if held:
            compute = (Wait(held, compute),)
        self.check_l1()
        program = Program(
            kernel=f"{self.plan.name}_{_ident(k.key)}",
            arch=self.arch.name,
            grid=self.grid,
            tensors=self.tensors(),
            buffers=self.buffers(),
            nets=tuple(self.nets),
            reader=pre + reader,
            compute=compute,
            writer=writer,
            notes=(
                f"{k.key} with {_bindings(self.env)}: {k.target}[i][j] = "
                f"{format_value(k.value)} on rows [{r0}, {r1}) x cols [{c0}, {c1})",
                *(
                    [f"multicast deliveries: {', '.join(dict.fromkeys(self.multicasts))}"]
                    if self.multicasts
                    else []
                ),
                *(
                    [
                        f"fused factor column {', '.join(self.forwarded)} read by the owner "
                        "of its tile (core column 0) before the update and multicast along "
                        "its core row, once per tile-row trip, held across the column passes"
                    ]
                    if self.forwarded
                    else []
                ),
                *(
                    [f"halo patches sent by their owners: {', '.join(self.conversions)}"]
                    if self.conversions
                    else []
                ),
            ),
        )
        reads = tuple(sorted({o.array for o in self.flow.operands}))
        return LaunchProgram(
            k.key,
            tuple(sorted(self.env.items())),
            program,
            tuple(self.consts),
            reads,
            k.target,
            nr * nc,
            (nr, nc),
            0 if self.flow.sunk else self.cut_count(nr, nc),
            tuple(sorted(self.multicasts.items())),
            self.const_senders(const_names),
            self.busiest_cut_rows,
            self.busiest_cut_tiles,
            self.busiest_cut_first,
            self.row_held,
        )

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

    def check_forwarded(self, reader: tuple[Stmt, ...]) -> None:
        """A fused launch reads column t + e of the rows it updates (the forwarded factor
        column): legal only when the core that owns that column's tile reads it before
        it writes the tile, and it alone reads it (it multicasts it along its core row),
        so no core can read an element another core has already overwritten. The
        factor's tile of a tile row is delivered once per tile-row trip, before the
        column passes, and held by every core of the row for all of them; the owner
        (core column 0, whose first pass is the factor's tile column) updates that tile
        in its first pass, after the read. Checked on the emitted reader stream."""
        k = self.flow.tile
        names = self.row_held
        gx = self.grid[1]
        factor_cols = {ld.col.eval(self.env) // TILE for ld in k.forwarded}
        problem = ""
        if len(names) != len(k.forwarded):
            problem = "the factor column is not one column-broadcast delivery of its own"
        elif self.flow.contraction is not None:
            problem = "the launch is a reduction, whose tiles are not one column pass each"
        elif any(not self.tc[0] <= t < self.tc[0] + self.width for t in factor_cols):
            problem = (
                "the factor's tile column is not in the first pass of core column 0 (a "
                "row-streamed range widened to the left of it), so another core owns it"
            )
        elif gx > 1 and not all(n in self.multicasts for n in names):
            problem = (
                "the factor column is not multicast along the core row, so every core "
                "would read it from DRAM while its owner overwrites it"
            )
        elif any(self.pk.task.lane(n) != "reader" for n in names):
            problem = "the factor column is not delivered by DM0 (whose sender is its owner)"
        else:
            problem = self.check_held_reads(names, reader)
        if problem:
            raise AnnotationError(
                f"{self.plan.path}:{k.line}: the fusion of `{k.fused}` into `{k.kernel}` "
                f"cannot be realized for the launch with {_bindings(self.env)}: {problem}. "
                "Drop tileplan.fuse or change the problem size."
            )
        self.forwarded = names

    def check_held_reads(self, names: tuple[str, ...], reader: tuple[Stmt, ...]) -> str:
        """Each DRAM read of the factor sits outside the column-pass loop (read once per
        tile-row trip, not again after the owner's first pass wrote the tile) and, on a
        grid of several core columns, under the sender's condition (core column 0)."""

        def walk(stmts: tuple[Stmt, ...], in_pass: bool, sender: bool) -> str:
            for st in stmts:
                match st:
                    case ReadDram(buffer=b) if b in names:
                        if in_pass:
                            return f"{b} is read again in every column pass"
                        if self.grid[1] > 1 and not sender:
                            return f"{b} is read from DRAM by cores other than its owner"
                    case Loop(var=v, body=body):
                        inner = in_pass or (v == self.wx and self.wx.upper > 0)
                        if err := walk(body, inner, sender):
                            return err
                    case IfCore(cond=cond, then=then, orelse=orelse):
                        owner = sender or cond == CORE_X.eq(0)
                        if err := walk(then, in_pass, owner) or walk(orelse, in_pass, sender):
                            return err
                    case Reserve(body=body) | Wait(body=body):
                        if err := walk(body, in_pass, sender):
                            return err
            return ""

        return walk(reader, False, False)

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

    def check_l1(self) -> None:
        """The launch's real buffers (interchanged blocks grow with the core's share of
        the output) must fit L1; Physical planned one output tile per block."""
        need = sum(b.tiles * b.depth * self.arch.tile.bytes(b.dtype) for b in self.buffers())
        if need > self.arch.l1_usable_bytes:
            raise InfeasibleError(
                f"{self.plan.path}: launch `{self.flow.tile.key}` needs {need} bytes of L1 "
                f"buffers per core on a {self.grid[0]}x{self.grid[1]} grid, more than "
                f"{self.arch.l1_usable_bytes}; lower tileplan.strip_mine, drop interchange "
                "or use a smaller size."
            )

    def check_bounds(self, r0: int, r1: int, c0: int, c1: int) -> None:
        k = self.flow.tile
        for ld in loads(k.value):
            decl = self.plan.array(ld.array)
            corners = [
                {**self.env, "i": i, "j": j, "k": 0} for i in (r0, r1 - 1) for j in (c0, c1 - 1)
            ]
            rows = [ld.row.eval(e) for e in corners]
            cols = [ld.col.eval(e) for e in corners]
            if min(rows) < 0 or max(rows) >= decl.rows or min(cols) < 0 or max(cols) >= decl.cols:
                raise CudaSubsetError(
                    f"{self.plan.path}:{k.line}: `{k.kernel}` reads {ld.array}[{ld.row}][{ld.col}] "
                    f"outside the {decl.rows}x{decl.cols} array for rows [{r0}, {r1}) x cols "
                    f"[{c0}, {c1}) ({', '.join(f'{n}={v}' for n, v in self.env.items())}); "
                    "tighten the guard."
                )

    def hoist(self, compute: tuple[Stmt, ...]) -> tuple[tuple[Stmt, ...], ...]:
        """Launch-invariant values (tileflow.reciprocal=hoisted): their operands are
        delivered once, the values computed once per core before the tile loop and held
        (like the constant frames) until the launch ends."""
        consts = set(self.const_index)
        names = {b for _, e in self.flow.hoisted for b in block_refs(e)} - consts
        ops = [o for o in self.flow.operands if o.name in names]
        lanes = self.pk.task
        reader = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "reader")
        writer = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "writer")
        held = tuple(h for h, _ in self.flow.hoisted)
        values = tuple(Reserve(h, (Compute(h, e),)) for h, e in self.flow.hoisted)
        once = (Wait(tuple(o.name for o in ops), values),) if ops else values
        return reader, writer, (*once, Wait(held, compute))

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

    def sunk_streams(self) -> tuple[tuple[Stmt, ...], ...]:
        """tileflow.guard_mask=dm: every tile computes the plain value; DM delivers the
        broadcast selectors masked to the tile's active rows/columns (a tile-granular
        selective copy from the constant table, multicast along the core column or row
        that shares the tile column or row), so no tile carries a compute mask."""
        f, lanes = self.flow, self.pk.task
        used = block_refs(f.expr)
        ops = [o for o in f.operands if o.name in used and o.name not in self.row_held]
        sel = tuple(
            self.deliver(
                ReadDram(name, CONST, as_expr(0), self.sunk_col[name], 1, self.cwidth(name)),
                (self.grid[0], 1) if axis == "col" else (1, self.grid[1]),
                "reader",
                name,
            )
            for name, axis in f.sunk
        )
        rd = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "reader") + sel
        wr = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "writer")
        names = tuple(o.name for o in ops) + tuple(n for n, _ in f.sunk)
        comp = (Wait(names, (Reserve("out", (Compute("out", self.expr),)),)),)
        write = WriteDram("out", f.tile.target, self.r, self.c, 1, self.width)
        return rd, comp, (*wr, Wait(("out",), (write,)))

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

    def tile_loop(
        self, body: tuple[Stmt, ...], row_pre: tuple[Stmt, ...] = (), hold: tuple[str, ...] = ()
    ) -> tuple[Stmt, ...]:
        """Row trips (wy) around column passes (wx). `row_pre` (deliveries) and `hold`
        (buffers waited for and held across the passes) belong to a tile-row trip: a
        fused launch's factor column, read once per trip and used by every pass."""
        nr, nc = self.tr[1] - self.tr[0] + 1, self.tc[1] - self.tc[0] + 1
        gy, gx = self.grid
        ny, nx = self.wy.upper + 1, self.wx.upper + 1
        per_row = bool(self.row_held)
        if not per_row and (nr % gy or nc % gx):
            body = (IfCore(conj(self.r.le(self.tr[1]), self.c.le(self.tc[1])), body),)
        elif per_row and nc % gx:
            body = (IfCore(self.c.le(self.tc[1]), body),)
        inner: tuple[Stmt, ...] = (
            (Loop(self.wx, as_expr(nx), body),) if nx > 1 else _fix(body, self.wx)
        )
        if per_row:
            inner = (*row_pre, *((Wait(hold, inner),) if hold else inner))
            if nr % gy:  # a whole core row skips the trip together (its multicasts too)
                inner = (IfCore(self.r.le(self.tr[1]), inner),)
        return (Loop(self.wy, as_expr(ny), inner),) if ny > 1 else _fix(inner, self.wy)

    # ----- addresses ---------------------------------------------------------------------
    def tile_of(self, t: TileIndex, own: Expr, limit: int) -> Expr:
        if t.base is None:
            assert t.elem is not None
            return as_expr(t.elem.eval(self.env) // TILE)
        if t.base == "k":
            raise AssertionError("panel index handled by the caller")
        e = own + t.delta
        return maximum(0, minimum(limit - 1, e)) if t.delta else e

    def read(self, o: Operand, in_step: bool = False) -> Stmt:
        decl = self.plan.array(o.array)
        row = self.tile_of(o.row, self.r if o.row.base == "r" else self.c, decl.rows // TILE)
        own_c = self.c
        if o.name in self.row_halos and o.col.delta > 0:  # east of the shard's last tile
            own_c = self.c + (self.width - 1)
        col = self.tile_of(o.col, own_c if o.col.base == "c" else self.r, decl.cols // TILE)
        read = ReadDram(o.name, o.array, row, col, 1, self.shapes.get(o.name, (1, 1))[1])
        return self.deliver(read, self.shared_area(o), self.pk.task.lane(o.name), o.name, in_step)

    def shared_area(self, o: Operand) -> tuple[int, int]:
        """The aligned block of cores that needs the same tile of `o` in every trip: a
        whole core column when its row index is fixed (it varies with CORE_X only), a
        whole core row when its column index is, the whole grid when both are."""
        gy, gx = self.grid
        uses_y = "r" in (o.row.base, o.col.base)
        uses_x = "c" in (o.row.base, o.col.base)
        return (1 if uses_y else gy, 1 if uses_x else gx)

    def deliver(
        self, read: ReadDram, area: tuple[int, int], lane: str, what: str, in_step: bool = False
    ) -> Stmt:
        """A delivery read from DRAM by every core, or, when an aligned block of cores
        needs the same block in the same trip, read once by the block's sending corner
        and multicast to the rest (the corner from which the lane's NoC runs into the
        block: top left on NoC0, bottom right on NoC1). Multicast needs the block's
        cores to run the delivery equally often: on an even grid, or `in_step` (a
        delivery per tile-row trip, shared along a core row, whose cores skip a trip
        together)."""
        ay, ax = area
        if ay * ax == 1 or not (self.even or (in_step and ay == 1)):
            return Reserve(read.buffer, (read,))
        last = lane == "writer"
        row, rest = multicast_pipes(self.grid, area, last)
        name = f"mc_{read.buffer}"
        nets = [n for n in (self.net(name, row), self.net(f"{name}_rest", rest)) if n]
        sends = tuple(Send(read.buffer, n) for n in nets)
        recv: tuple[Stmt, ...] = tuple(Receive(read.buffer, n) for n in nets)
        gy, gx = self.grid
        sy, sx = (gy - 1, gx - 1) if last else (0, 0)
        on_row = CORE_Y.eq(sy) if ay > 1 else BoolConst(True)
        on_col = CORE_X.eq(sx) if ax > 1 else BoolConst(True)
        if len(recv) == 2:  # the sender's row receives along it, the other rows across it
            recv = (IfCore(on_row, recv[:1], recv[1:]),)
        self.multicasts[what] = ay * ax
        return Reserve(read.buffer, (IfCore(conj(on_row, on_col), (read, *sends), recv),))

    def const_senders(self, names: tuple[str, ...]) -> tuple[int, ...]:
        if self.grid[0] * self.grid[1] == 1:
            return ()
        count: dict[tuple[int, int], int] = {}
        for c in names:
            origin = self.only_on[c][0::2] if c in self.only_on else (0, 0)
            count[origin] = count.get(origin, 0) + 1
        return tuple(v for _, v in sorted(count.items()))

    def deliver_rect(self, read: ReadDram, rect: tuple[int, int, int, int]) -> Stmt:
        """A constant read by the cores of `rect` = (y0, y1, x0, x1) alone: read by its
        top-left core and multicast on NoC0 to the rest (its row, then the rows below)."""
        y0, y1, x0, x1 = rect
        row = (Pipe((y0, x0), (y0, y0 + 1), (x0 + 1, x1)),) if x1 - x0 > 1 else ()
        rest = (Pipe((y0, x0), (y0 + 1, y1), (x0, x1)),) if y1 - y0 > 1 else ()
        name = f"mc_{read.buffer}"
        nets = [n for n in (self.net(name, row), self.net(f"{name}_rest", rest)) if n]
        recv: tuple[Stmt, ...] = tuple(Receive(read.buffer, n) for n in nets)
        if len(recv) == 2:
            recv = (IfCore(CORE_Y.eq(y0), recv[:1], recv[1:]),)
        sender = conj(CORE_Y.eq(y0), CORE_X.eq(x0))
        sends = tuple(Send(read.buffer, n) for n in nets)
        body = Reserve(read.buffer, (IfCore(sender, (read, *sends), recv),))
        return IfCore(_in_rect(rect), (body,))

    def net(self, name: str, pipes: tuple[Pipe, ...]) -> str:
        if not pipes:
            return ""
        if all(n.name != name for n in self.nets):
            self.nets.append(PipeNet(name, "multicast", pipes))
        return name

    def mask_reads(self) -> tuple[Stmt, ...]:
        w, off = self.width, self.nmask_offset
        return (
            Reserve("mask", (ReadDram("mask", CONST, as_expr(0), self.mask_col, 1, w),)),
            Reserve("nmask", (ReadDram("nmask", CONST, as_expr(0), self.mask_col + off, 1, w),)),
        )

    # ----- element-wise kernels ----------------------------------------------------------
    def elementwise_streams(self) -> tuple[tuple[Stmt, ...], ...]:
        f, lanes = self.flow, self.pk.task
        if f.sunk:
            streams = self.sunk_streams()
            return self.convert_halos(streams) if f.conversions else streams
        used = block_refs(f.expr)
        masked_ops = [o for o in f.operands if o.name in used or o.name == f.old]
        plain_ops = [o for o in f.operands if o.name in used]
        target = f.tile.target
        write = WriteDram("out", target, self.r, self.c, 1, self.width)
        masked_expr = BinaryExpr(
            "add",
            BinaryExpr("mul", BlockRef("mask"), self.expr),
            BinaryExpr("mul", BlockRef("nmask"), BlockRef(f.old)),
        )

        convs = f.conversions
        held = {c.own for c in convs}
        patches = tuple(c.patch for c in convs)

        def branch(ops: list[Operand], expr: CExpr, masked: bool) -> tuple[tuple[Stmt, ...], ...]:
            ops = [o for o in ops if o.name not in self.row_held]  # delivered per row trip
            rd = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "reader")
            wr = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "writer")
            if masked:
                rd = (*rd, *self.mask_reads())
            names = tuple(o.name for o in ops if o.name not in held) + patches
            names += ("mask", "nmask") if masked else ()
            if not masked and f.dm_copy and len(ops) == 1:
                src = ops[0].name
                copy = WriteDram(src, target, self.r, self.c, 1, self.width)
                return rd, (), (*wr, Wait((src,), (copy,)))
            comp = (Wait(names, (Reserve("out", (Compute("out", expr),)),)),)
            return rd, comp, (*wr, Wait(("out",), (write,)))

        m = branch(masked_ops, masked_expr, True)
        if isinstance(self.cut, BoolConst) and self.cut.value:
            streams = m
        else:
            p = branch(plain_ops, self.expr, False)
            if isinstance(self.cut, BoolConst):
                streams = p
            else:
                streams = tuple((IfCore(self.cut, a, b),) for a, b in zip(m, p, strict=True))
        return self.convert_halos(streams) if convs else streams

    def convert_halos(self, streams: tuple[tuple[Stmt, ...], ...]) -> tuple[tuple[Stmt, ...], ...]:
        """tileflow.halo_conversion=sender: each core converts its own tile into the edge
        patch its neighbour needs and sends it on a unicast pipe; a core whose halo
        tile no core of this trip owns (the first or last grid column or row), or every
        core when the grid does not divide the tile range, reads the halo tile from DRAM
        and converts it itself. Sends go on DM1 and receives on DM0, so neither lane
        waits for its own neighbour chain."""
        reader, compute, writer = streams
        f, lanes = self.flow, self.pk.task
        pre_c: list[Stmt] = []
        post_r: list[Stmt] = []
        late_w: list[Stmt] = []
        pre_w: list[Stmt] = []
        ops = {o.name: o for o in f.operands}
        for hc in f.conversions:
            halo = ops[hc.halo]
            fallback_read = self.read(halo)
            fallback = Wait(
                (hc.halo,), (Reserve(hc.patch, (Compute(hc.patch, hc.convert(hc.halo)),)),)
            )
            size = self.grid[1] if hc.axis == "x" else self.grid[0]
            if not self.even or size < 2:
                (pre_w if lanes.lane(hc.halo) == "writer" else post_r).append(fallback_read)
                pre_c.append(fallback)
                self.conversions.append(f"{hc.patch} (receiver-side here)")
                continue
            coord = CORE_X if hc.axis == "x" else CORE_Y
            receives = coord.ge(1) if hc.step < 0 else coord.le(size - 2)
            sends = coord.le(size - 2) if hc.step < 0 else coord.ge(1)
            net = self.net(f"halo_{hc.patch}", self.halo_pipes(hc.axis, hc.step))
            out = f"{hc.patch}_send"
            post_r.append(IfCore(receives, (Reserve(hc.patch, (Receive(hc.patch, net),)),)))
            pre_w.append(IfCore(sends, (Wait((out,), (Send(out, net),)),)))
            if lanes.lane(hc.halo) == "writer":
                late_w.append(IfCore(receives, (), (fallback_read,)))
            else:
                post_r.append(IfCore(receives, (), (fallback_read,)))
            pre_c.insert(0, IfCore(sends, (Reserve(out, (Compute(out, hc.convert(hc.own)),)),)))
            pre_c.append(IfCore(receives, (), (fallback,)))  # patches to send go first
            self.conversions.append(hc.patch)
            if hc.edge not in block_refs(f.expr):
                # the senders and the cores converting a DRAM halo, which are the first
                # or last along the axis: exactly the senders (size >= 2)
                gy, gx = self.grid
                lo, hi = (0, size - 1) if hc.step < 0 else (1, size)
                self.only_on[hc.edge] = (0, gy, lo, hi) if hc.axis == "x" else (lo, hi, 0, gx)
        own = tuple(dict.fromkeys(hc.own for hc in f.conversions))
        body = (Wait(own, (*pre_c, *compute)),)
        return (*reader, *post_r), body, (*pre_w, *late_w, *writer)

    def halo_pipes(self, axis: str, step: int) -> tuple[Pipe, ...]:
        """Unicast pipes from each core to the core whose halo tile it owns."""
        gy, gx = self.grid
        pipes = []
        for y in range(gy):
            for x in range(gx):
                ty, tx = (y, x - step) if axis == "x" else (y - step, x)
                if 0 <= ty < gy and 0 <= tx < gx:
                    pipes.append(Pipe((y, x), (ty, ty + 1), (tx, tx + 1)))
        return tuple(pipes)

    # ----- contractions ------------------------------------------------------------------
    def contraction_streams(self, cn: Contraction) -> tuple[tuple[Stmt, ...], ...]:
        f, lanes = self.flow, self.pk.task
        kb = Sym("kb", 0, max(0, cn.blocks - 1), 1, "index")
        strip = cn.lhs.cols
        k0 = kb * strip

        def panel(o: Operand) -> Stmt:
            own = self.r if o.row.base == "r" or o.col.base == "r" else self.c
            if o.row.base == "k":
                read = ReadDram(o.name, o.array, k0, own, strip, 1)
            else:
                read = ReadDram(o.name, o.array, own, k0, 1, strip)
            return self.deliver(read, self.shared_area(o), lanes.lane(o.name), o.name)

        deliveries = {o.name: panel(o) for o in (cn.lhs, cn.rhs)}
        rd_k = tuple(s for n, s in deliveries.items() if lanes.lane(n) == "reader")
        wr_k = tuple(s for n, s in deliveries.items() if lanes.lane(n) == "writer")
        used = block_refs(f.expr) - {"acc"}
        ops = [o for o in f.operands if o.name in used]

        def loop(body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
            return (Loop(kb, as_expr(cn.blocks), body),) if cn.blocks > 1 else _fix(body, kb)

        reader = loop(rd_k) + tuple(self.read(o) for o in ops if lanes.lane(o.name) == "reader")
        writer_reads = tuple(self.read(o) for o in ops if lanes.lane(o.name) == "writer")
        mm = MatmulExpr(BlockRef(cn.lhs.name), BlockRef(cn.rhs.name), cn.transpose)
        acc_loop = loop(
            (
                Wait(
                    (cn.lhs.name, cn.rhs.name, "acc"),
                    (Reserve("acc", (Compute("acc", BinaryExpr("add", BlockRef("acc"), mm)),)),),
                ),
            )
        )
        scaled = _subst_acc(f.expr, cn.scale)
        compute = (
            Reserve("acc", (Compute("acc", FillExpr(0.0, 1, 1)),)),
            *acc_loop,
            Wait(("acc", *(o.name for o in ops)), (Reserve("out", (Compute("out", scaled),)),)),
        )
        writer = (
            (loop(wr_k) if wr_k else ())
            + writer_reads
            + (Wait(("out",), (WriteDram("out", f.tile.target, self.r, self.c, 1, 1),)),)
        )
        return reader, compute, writer

    def interchanged_streams(self, cn: Contraction) -> tuple[tuple[Stmt, ...], ...]:
        """Block loop outermost: each core owns a block of by x bx output tiles, receives
        one by x strip and one bx x strip panel per reduction block, and keeps its whole
        accumulator block in L1 across the reduction."""
        f, lanes = self.flow, self.pk.task
        by, bx = self.block
        kb = Sym("kb", 0, max(0, cn.blocks - 1), 1, "index")
        strip = cn.lhs.cols
        k0 = kb * strip
        shape = {cn.lhs.name: (by, strip), cn.rhs.name: (bx, strip)}
        if not cn.transpose:
            shape[cn.rhs.name] = (strip, bx)

        def panel(o: Operand) -> Stmt:
            rows, cols = shape[o.name]
            if o.row.base == "k":
                read = ReadDram(o.name, o.array, k0, self.c, rows, cols)
            else:
                own = self.r if o is cn.lhs else self.c
                read = ReadDram(o.name, o.array, own, k0, rows, cols)
            return self.deliver(read, self.shared_area(o), lanes.lane(o.name), o.name)

        def loop(body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
            return (Loop(kb, as_expr(cn.blocks), body),)

        rd_k = tuple(panel(o) for o in (cn.lhs, cn.rhs) if lanes.lane(o.name) == "reader")
        wr_k = tuple(panel(o) for o in (cn.lhs, cn.rhs) if lanes.lane(o.name) == "writer")
        used = block_refs(f.expr) - {"acc"}
        ops = [o for o in f.operands if o.name in used]
        self.shapes = {**shape, **{o.name: (by, bx) for o in ops}, "acc": (by, bx), "out": (by, bx)}

        def whole(o: Operand) -> Stmt:
            return Reserve(o.name, (ReadDram(o.name, o.array, self.r, self.c, by, bx),))

        reader = loop(rd_k) + tuple(whole(o) for o in ops if lanes.lane(o.name) == "reader")
        mm = MatmulExpr(BlockRef(cn.lhs.name), BlockRef(cn.rhs.name), cn.transpose)
        step = Compute("acc", BinaryExpr("add", BlockRef("acc"), mm))
        compute = (
            Reserve("acc", (Compute("acc", FillExpr(0.0, by, bx)),)),
            *loop((Wait((cn.lhs.name, cn.rhs.name, "acc"), (Reserve("acc", (step,)),)),)),
            Wait(
                ("acc", *(o.name for o in ops)),
                (Reserve("out", (Compute("out", _fills(_subst_acc(f.expr, cn.scale), by, bx)),)),),
            ),
        )
        writer = (
            (loop(wr_k) if wr_k else ())
            + tuple(whole(o) for o in ops if lanes.lane(o.name) == "writer")
            + (Wait(("out",), (WriteDram("out", f.tile.target, self.r, self.c, by, bx),)),)
        )
        return reader, compute, writer

    # ----- declarations ------------------------------------------------------------------
    def tensors(self) -> tuple[DramTensor, ...]:
        names = sorted({o.array for o in self.flow.operands} | {self.flow.tile.target})
        out = []
        for n in names:
            d = self.plan.array(n)
            role = "output" if n == self.flow.tile.target else "input"
            out.append(
                DramTensor(n, (d.rows, d.cols), self.dtype, role, d.rows // TILE, d.cols // TILE)
            )
        width, h = len(self.consts), table_rows(tuple(self.consts))
        out.append(DramTensor(CONST, (TILE * h, TILE * width), self.dtype, "input", h, width))
        return tuple(out)

    def buffers(self) -> tuple[Buffer, ...]:
        depth, dt = self.phys.depth, self.dtype
        shapes = self.shapes
        bufs = [
            Buffer(o.name, *shapes.get(o.name, (o.rows, o.cols)), dt, depth, "load")
            for o in self.flow.operands
        ]
        bufs += [Buffer(c, *shapes.get(c, (1, 1)), dt, 1, "load") for c in self.frames()]
        bufs += [Buffer(h, 1, 1, dt, 1, "compute") for h, _ in self.flow.hoisted]
        bufs += [Buffer(n, *shapes.get(n, (1, 1)), dt, depth, "load") for n, _ in self.flow.sunk]
        for hc in self.flow.conversions:
            bufs.append(Buffer(hc.patch, 1, 1, dt, depth, "load"))
            if hc.patch in self.conversions:
                bufs.append(Buffer(f"{hc.patch}_send", 1, 1, dt, depth, "store"))
        bufs += [Buffer(m, *shapes.get(m, (1, 1)), dt, depth, "load") for m in ("mask", "nmask")]
        bufs.append(Buffer("out", *shapes.get("out", (1, 1)), dt, depth, "store"))
        if self.flow.contraction is not None:
            bufs.append(Buffer("acc", *shapes.get("acc", (1, 1)), dt, 2, "state"))
        return tuple(bufs)


def _in_rect(rect: tuple[int, int, int, int]) -> Cond:
    y0, y1, x0, x1 = rect
    return conj(CORE_Y.ge(y0), CORE_Y.le(y1 - 1), CORE_X.ge(x0), CORE_X.le(x1 - 1))


def _bindings(env: Mapping[str, int]) -> str:
    return ", ".join(f"{n}={v}" for n, v in sorted(env.items())) or "no parameters"


def _span(lo: int, hi: int, tile: int) -> tuple[int, int]:
    a, b = tile * TILE, tile * TILE + TILE
    return (max(lo, a) - a, min(hi, b) - a)


def _fix(body: tuple[Stmt, ...], var: Sym) -> tuple[Stmt, ...]:
    """A single-trip loop is dropped; its variable is 0 (a Loop of count 1 keeps it bound)."""
    return (Loop(var, as_expr(1), body),)


def _subst_acc(e: CExpr, scale: float) -> CExpr:
    match e:
        case BlockRef(buffer="acc"):
            return e if scale == 1.0 else BinaryExpr("mul", e, FillExpr(scale, 1, 1))
        case BinaryExpr(op=op, lhs=a, rhs=b):
            return BinaryExpr(op, _subst_acc(a, scale), _subst_acc(b, scale))
        case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t):
            return MatmulExpr(_subst_acc(a, scale), _subst_acc(b, scale), t)
    return e


def _fills(e: CExpr, rows: int, cols: int) -> CExpr:
    """Scalar fills reshaped to the block they combine with."""
    match e:
        case FillExpr(value=v):
            return FillExpr(v, rows, cols)
        case BinaryExpr(op=op, lhs=a, rhs=b):
            return BinaryExpr(op, _fills(a, rows, cols), _fills(b, rows, cols))
    return e


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)
