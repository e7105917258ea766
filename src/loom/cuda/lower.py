"""Physical x one launch -> Program: the per-core streams of one kernel launch.

The launch's tile range (the tiles its guard rectangle touches) is spread over a core
grid of at most the architecture's size; core (y, x) takes tiles (r0 + y + GY*wy,
c0 + x + GX*wx). Constant frames are delivered once and held for the whole tile loop;
tiles the guard cuts (or every tile, with `predicates: all`) get a mask and its
complement and store `mask * new + nmask * old`, exact for both mask values.

The lowering is one object built in layers, each module on the one before: the layout
and masks (`lower_layout.py`), deliveries and multicasts (`lower_deliver.py`), the
streams of each kernel kind (`lower_streams.py`); this module assembles the Program,
declares its tensors and buffers, and checks the launch (bounds, L1, fusion).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loom.arch import Arch
from loom.cuda.consts import CONST, ConstSpec, table_rows
from loom.cuda.lower_deliver import _in_rect
from loom.cuda.lower_streams import LaunchStreams
from loom.cuda.physical import Physical
from loom.cuda.tileplan import TILE, format_value, loads
from loom.errors import AnnotationError, CudaSubsetError, InfeasibleError
from loom.ir.program import (
    CORE_X,
    CORE_Y,
    Buffer,
    DramTensor,
    IfCore,
    Loop,
    Program,
    ReadDram,
    Reserve,
    Stmt,
    Wait,
)
from loom.symbolic import BoolConst, as_expr


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


class _Lower(LaunchStreams):
    """The whole lowering of one launch: streams assembled into a checked Program."""

    def program(self) -> LaunchProgram | None:
        k = self.flow.tile
        r0, r1, c0, c1 = k.region.at(self.env)
        if r0 >= r1 or c0 >= c1:
            return None
        self.check_bounds(r0, r1, c0, c1)
        nr, nc = self.layout(r0, r1, c0, c1)
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

    # ----- checks ------------------------------------------------------------------------
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


def _bindings(env: Mapping[str, int]) -> str:
    return ", ".join(f"{n}={v}" for n, v in sorted(env.items())) or "no parameters"


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)
