"""How a launch's cores get their tiles: DRAM reads, multicast from a sending corner.

The second layer of the lowering of one launch (on `lower_layout.py`): a delivery is
read from DRAM by every core, or read once by the sending corner of an aligned block
of cores that needs the same tile and multicast to the rest.
"""

from __future__ import annotations

from loom.cuda.consts import CONST
from loom.cuda.lower_layout import LaunchLayout
from loom.cuda.tileflow import Operand, TileIndex
from loom.cuda.tileplan import TILE
from loom.ir.multicast import multicast_pipes
from loom.ir.program import (
    CORE_X,
    CORE_Y,
    IfCore,
    Pipe,
    PipeNet,
    ReadDram,
    Receive,
    Reserve,
    Send,
    Stmt,
)
from loom.symbolic import BoolConst, Cond, Expr, as_expr, conj, maximum, minimum


class LaunchDeliveries(LaunchLayout):
    """Reads of a launch's operand tiles and constants, unicast or multicast."""

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


def _in_rect(rect: tuple[int, int, int, int]) -> Cond:
    y0, y1, x0, x1 = rect
    return conj(CORE_Y.ge(y0), CORE_Y.le(y1 - 1), CORE_X.ge(x0), CORE_X.le(x1 - 1))
