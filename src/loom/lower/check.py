"""Structural invariants of a lowered Program (checked after lowering, and usable on
any Program): names resolve, scopes nest, and DRAM windows stay inside their tensors.

These are the mistakes that would surface only as a hang or a garbled tensor on the
device: a buffer acquired twice by one stream at once (a circular buffer hands out
its blocks in order, so the second acquisition would get the wrong block), a block
reserved in a one-block buffer whose block the same stream holds (it never frees), a copy or
a compute outside a scope of its buffer, or a read past the end of a tensor.
"""

from __future__ import annotations

from collections.abc import Iterator

from loom.errors import ScheduleError
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    BroadcastExpr,
    CExpr,
    Compute,
    IfCore,
    Loop,
    MatmulExpr,
    Parallel,
    Program,
    ReadDram,
    Receive,
    ReceiveAll,
    ReceiveEach,
    ReduceExpr,
    Reserve,
    Send,
    Stmt,
    UnaryExpr,
    Wait,
    WriteDram,
)
from loom.symbolic import Sym


def block_refs(expr: CExpr) -> Iterator[str]:
    match expr:
        case BlockRef(buffer=b):
            yield b
        case MatmulExpr(lhs=a, rhs=b) | BinaryExpr(lhs=a, rhs=b):
            yield from block_refs(a)
            yield from block_refs(b)
        case UnaryExpr(operand=a) | ReduceExpr(operand=a) | BroadcastExpr(operand=a):
            yield from block_refs(a)


class _Checker:
    def __init__(self, program: Program) -> None:
        self.p = program
        self.buffers = {b.name for b in program.buffers}
        self.depth = {b.name: b.depth for b in program.buffers}
        self.nets = {n.name for n in program.nets}
        self.loops: list[Sym] = []

    def fail(self, stream: str, what: str) -> None:
        raise ScheduleError(f"lowering produced an invalid {stream} stream: {what}.")

    def stmts(
        self, stream: str, body: tuple[Stmt, ...], held: frozenset[str], rsv: frozenset[str]
    ) -> None:
        for s in body:
            self.stmt(stream, s, held, rsv)

    def stmt(self, stream: str, s: Stmt, held: frozenset[str], rsv: frozenset[str]) -> None:
        match s:
            case Wait(buffers=bufs, body=body):
                for b in bufs:
                    self.known(stream, b)
                    if b in held:
                        self.fail(stream, f"buffer {b!r} is waited while a block is held")
                self.stmts(stream, body, held | set(bufs), rsv)
            case Reserve(buffer=b, body=body):
                self.reserve(stream, b, held, rsv)
                self.stmts(stream, body, held, rsv | {b})
            case Loop(var=var, body=body):
                self.loops.append(var)
                self.stmts(stream, body, held, rsv)
                self.loops.pop()
            case IfCore(then=then, orelse=orelse):
                self.stmts(stream, then, held, rsv)
                self.stmts(stream, orelse, held, rsv)
            case Parallel(copies=copies):
                self.stmts(stream, copies, held, rsv)
            case Compute(dst=dst, expr=expr):
                if dst not in rsv:
                    self.fail(stream, f"compute into {dst!r} outside its reserve")
                for ref in block_refs(expr):
                    if ref not in held:
                        self.fail(stream, f"compute reads {ref!r} outside its wait")
            case ReadDram() | Receive() | ReceiveAll() | ReceiveEach() | Send() | WriteDram():
                self.copy(stream, s, held, rsv)

    def reserve(self, stream: str, b: str, held: frozenset[str], rsv: frozenset[str]) -> None:
        self.known(stream, b)
        if b in rsv:
            self.fail(stream, f"buffer {b!r} is reserved while a block is reserved")
        if b in held and self.depth[b] == 1:
            self.fail(stream, f"buffer {b!r} is reserved while its only block is held")

    def copy(self, stream: str, s: Stmt, held: frozenset[str], rsv: frozenset[str]) -> None:
        match s:
            case ReadDram(buffer=b) | Receive(buffer=b):
                if b not in rsv:
                    self.fail(stream, f"copy into {b!r} outside its reserve")
            case WriteDram(buffer=b):
                if b not in held:
                    self.fail(stream, f"write of {b!r} outside its wait")
            case Send(buffer=b):
                if b not in held | rsv:
                    self.fail(stream, f"send of {b!r} outside a scope of it")
        net = getattr(s, "net", None)
        if net is not None and net not in self.nets:
            self.fail(stream, f"unknown net {net!r}")
        if isinstance(s, ReadDram | WriteDram):
            self.window(stream, s)

    def known(self, stream: str, b: str) -> None:
        if b not in self.buffers:
            self.fail(stream, f"unknown buffer {b!r}")

    def window(self, stream: str, s: ReadDram | WriteDram) -> None:
        t = self.p.tensor(s.tensor)
        free = [v for v in s.row.free_syms() | s.col.free_syms() if v.kind != "core"]
        for corner in ({v.name: v.lower for v in free}, {v.name: v.upper for v in free}):
            for y in range(self.p.grid[0]):
                for x in range(self.p.grid[1]):
                    env = {**corner, "core_y": y, "core_x": x}
                    row, col = s.row.eval(env), s.col.eval(env)
                    if row < 0 or col < 0 or row + s.rows > t.rows or col + s.cols > t.cols:
                        self.fail(stream, f"{s.tensor!r} window ({row}, {col}) out of bounds")


def check_program(program: Program) -> None:
    """Raise ScheduleError when `program` breaks a structural invariant."""
    checker = _Checker(program)
    for name, body in program.streams:
        checker.stmts(name, body, frozenset(), frozenset())
