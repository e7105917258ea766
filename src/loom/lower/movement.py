"""The data-movement streams: the reader (NoC0) and the writer (NoC1) each fill the load
buffers the buffer plan gives them (from DRAM or from a multicast); the writer also
drains store buffers to DRAM and runs the gathers.

Loads follow the tile program's loop nest. A multicast load is read from DRAM by the
origin core of its group, which sends the block to the rest of the group; the others
receive it into their own reserved block. Adjacent unicast loads into different buffers
are issued together (one `Parallel`) so their DRAM reads overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from loom.errors import ScheduleError
from loom.ir.multicast import multicast_pipes
from loom.ir.program import (
    IfCore,
    Loop,
    Parallel,
    Pipe,
    PipeNet,
    ReadDram,
    Receive,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)
from loom.ir.tile import ForLoop, Gather, If, Load, Op, Store
from loom.lower.context import LowerContext
from loom.lower.dram import tile_window
from loom.lower.loops import core_cond, loop_var
from loom.lower.mesh import all_cores, group_origin_cond, origin_row_cond
from loom.symbolic import Expr

WriterMerge = Callable[[tuple[Gather, ...], If, dict[str, Expr]], tuple[Stmt, ...]]


def _address(
    ctx: LowerContext, op: Load | Store, env: Mapping[str, Expr]
) -> tuple[Expr, Expr, int, int]:
    kind = "load" if isinstance(op, Load) else "store"
    at = f"{ctx.program.source_file}:{op.line}: " if ctx.program.source_file and op.line else ""
    where = f"{at}the {kind} of {op.tensor!r}"
    return tile_window(ctx.tensor(op.tensor), op.window, env, where)


@dataclass
class Movement:
    ctx: LowerContext
    nets: list[PipeNet] = field(default_factory=list)

    # ----- streams -----------------------------------------------------------------
    def reader(self, ops: tuple[Op, ...], env: dict[str, Expr]) -> tuple[Stmt, ...]:
        return self._stream(ops, env, "reader", None)

    def writer(
        self, ops: tuple[Op, ...], env: dict[str, Expr], merge: WriterMerge
    ) -> tuple[Stmt, ...]:
        return self._stream(ops, env, "writer", merge)

    def _engine(self, op: Load) -> str:
        vb = self.ctx.buffered.buffer_of(op.result.name)
        return vb.producer if vb is not None else "reader"

    def _stream(
        self, ops: tuple[Op, ...], env: dict[str, Expr], engine: str, merge: WriterMerge | None
    ) -> tuple[Stmt, ...]:
        """The loads of one engine (and, for the writer, the stores and gathers) in
        program order, inside the loops and guards that enclose them."""
        out: list[Stmt] = []
        group: list[Load] = []
        i = 0
        while i <= len(ops):
            op = ops[i] if i < len(ops) else None
            mine = op if isinstance(op, Load) and self._engine(op) == engine else None
            if mine is not None and self._unicast(mine) and self._fits(group, mine):
                group.append(mine)
                i += 1
                continue
            if group:
                out.append(self._load_group(group, env))
                group = []
            if merge is not None and isinstance(op, Gather):
                j = i
                while j < len(ops) and isinstance(ops[j], Gather):
                    j += 1
                guard = ops[j] if j < len(ops) else None
                if not isinstance(guard, If):
                    raise ScheduleError("a gather must be followed by the owner's `if` merge.")
                gathers = tuple(g for g in ops[i:j] if isinstance(g, Gather))
                out.extend(merge(gathers, guard, env))
                i = j + 1
                continue
            if mine is not None:
                out.append(self._load(mine, env))
            elif op is not None:
                out.extend(self.nested(op, env, engine, merge))
            i += 1
        return tuple(out)

    def nested(
        self, op: Op, env: dict[str, Expr], engine: str, merge: WriterMerge | None
    ) -> tuple[Stmt, ...]:
        match op:
            case Store() if merge is not None:
                cb = self.ctx.role_cb(op.value.name, "store")
                row, col, rows, cols = _address(self.ctx, op, env)
                return (Wait((cb,), (WriteDram(cb, op.tensor, row, col, rows, cols),)),)
            case ForLoop():
                var, count = loop_var(op, env)
                body = self._stream(op.body, {**env, op.index.name: var}, engine, merge)
                return (Loop(var, count, body),) if body else ()
            case If(cond=cond, body=body_ops):
                body = self._stream(body_ops, env, engine, merge)
                return (IfCore(core_cond(cond, env), body),) if body else ()
        return ()

    def _unicast(self, op: Load) -> bool:
        copy = self.ctx.copy_of(op)
        return copy.mode == "unicast" or copy.area == (1, 1)

    def _fits(self, group: list[Load], op: Load) -> bool:
        cbs = {self.ctx.role_cb(g.result.name, "load") for g in group}
        return self.ctx.role_cb(op.result.name, "load") not in cbs

    def _read(self, op: Load, env: Mapping[str, Expr]) -> ReadDram:
        cb = self.ctx.role_cb(op.result.name, "load")
        row, col, rows, cols = _address(self.ctx, op, env)
        buf = self.ctx.cbs[cb]
        if (rows, cols) != (buf.rows, buf.cols):
            raise ScheduleError(
                f"load of {op.tensor!r} reads {rows}x{cols} tiles into buffer {cb!r} of "
                f"{buf.rows}x{buf.cols} tiles; the buffer plan and the window disagree."
            )
        return ReadDram(cb, op.tensor, row, col, rows, cols)

    def _load_group(self, group: list[Load], env: Mapping[str, Expr]) -> Stmt:
        reads = tuple(self._read(op, env) for op in group)
        inner: Stmt = reads[0] if len(reads) == 1 else Parallel(reads)
        body: tuple[Stmt, ...] = (inner,)
        for read in reversed(reads):
            body = (Reserve(read.buffer, body),)
        return body[0]

    def _load(self, op: Load, env: Mapping[str, Expr]) -> Stmt:
        copy = self.ctx.copy_of(op)
        if copy.mode != "multicast":
            raise ScheduleError(f"load of {op.tensor!r} has copy mode {copy.mode!r}.")
        read = self._read(op, env)
        self._check_invariant(op, copy.area, env)
        m = self.ctx.schedule.mapping
        cores = (m.cores_y, m.cores_x)
        last = self._engine(op) == "writer"  # on NoC1: send from the bottom-right corner
        row, rest = multicast_pipes(cores, copy.area, last)
        name = f"mcast_{op.result.name}"
        rest_name = f"{name}_{'above' if last else 'below'}" if row else name
        nets = [self._net(name, row), self._net(rest_name, rest)]
        sends = tuple(Send(read.buffer, n) for n in nets if n)
        recv: tuple[Stmt, ...] = tuple(Receive(read.buffer, n) for n in nets if n)
        if len(recv) == 2:  # the sender's row receives along it, the other rows across it
            recv = (IfCore(origin_row_cond(cores, copy.area, last), recv[:1], recv[1:]),)
        stmt = IfCore(group_origin_cond(cores, copy.area, last), (read, *sends), recv)
        return Reserve(read.buffer, (stmt,))

    def _net(self, name: str, pipes: tuple[Pipe, ...]) -> str:
        if not pipes:
            return ""
        if all(n.name != name for n in self.nets):
            self.nets.append(PipeNet(name, "multicast", pipes))
        return name

    def _check_invariant(self, op: Load, area: tuple[int, int], env: Mapping[str, Expr]) -> None:
        """Every core of a multicast group must need the same block."""
        row, col, _, _ = _address(self.ctx, op, env)
        free = [s for s in row.free_syms() | col.free_syms() if s.kind != "core"]
        for corner in ({s.name: s.lower for s in free}, {s.name: s.upper for s in free}):
            for y, x in all_cores(self.ctx.schedule.mapping):
                here = {**corner, "core_y": y, "core_x": x}
                there = {**corner, "core_y": y - y % area[0], "core_x": x - x % area[1]}
                if (row.eval(here), col.eval(here)) != (row.eval(there), col.eval(there)):
                    raise ScheduleError(
                        f"load of {op.tensor!r} is multicast over {area[0]}x{area[1]} cores, "
                        f"but core ({y}, {x}) needs another block than its group's sender."
                    )
