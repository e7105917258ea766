"""The reader, compute and writer streams of a launch, one builder per kernel kind.

The third layer of the lowering of one launch (on `lower_deliver.py`): element-wise
kernels (masked where the guard cuts a tile: `mask * new + nmask * old`), halo patches
converted by their senders, guards sunk into DM selectors, contractions (and their
interchanged, block-outermost form), launch-invariant values, and the tile loop.
"""

from __future__ import annotations

from loom.cuda.consts import CONST
from loom.cuda.lower_deliver import LaunchDeliveries
from loom.cuda.lower_layout import _fills
from loom.cuda.tileflow import Contraction, Operand, block_refs
from loom.ir.program import (
    CORE_X,
    CORE_Y,
    BinaryExpr,
    BlockRef,
    CExpr,
    Compute,
    FillExpr,
    IfCore,
    Loop,
    MatmulExpr,
    Pipe,
    ReadDram,
    Receive,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)
from loom.symbolic import BoolConst, Sym, as_expr, conj


class LaunchStreams(LaunchDeliveries):
    """The streams of a launch's tile body, by kernel kind, and what wraps them."""

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

    # ----- around the tile body ----------------------------------------------------------
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
