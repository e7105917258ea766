"""Program: the lowered per-core form of a schedule, shared by code generation and timing.

A Program is SPMD: every core of the `grid` runs the same three streams — `reader`
(data movement on NoC0), `compute`, and `writer` (data movement on NoC1) — whose
statements may branch on the core's coordinates. Addresses are expressions of the core
coordinates (`CORE_Y`, `CORE_X`) and loop variables, so the TT-Lang emitter prints them
as code and the timing simulator evaluates them per core.

Tensors live in DRAM as 2-D grids of 32x32 tiles: the last two dims are padded to a
multiple of the tile and the leading dims are folded into rows (so a [B, S, D] tensor is a
[B * S/32, D/32] tile grid). Buffers are circular buffers in each core's L1 holding
`depth` blocks of `rows x cols` tiles. A block of a "row vector" (the result of a row
reduction) keeps its values in column 0 of each tile.

Synchronisation follows the circular-buffer protocol: a producer `Reserve`s a free block,
fills it and pushes it when its scope ends; a consumer `Wait`s for a filled block, reads
it and pops it when its scope ends. Data moves only through `ReadDram`, `WriteDram`,
`Send` and `Receive`; each is blocking, except that the copies inside one `Parallel`
are issued together and waited for together.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from loom.symbolic import Cond, Expr, Sym

CORE_Y = Sym("core_y", 0, 1023, 1, "core")
CORE_X = Sym("core_x", 0, 1023, 1, "core")


@dataclass(frozen=True)
class DramTensor:
    name: str
    shape: tuple[int, ...]
    """Logical (torch) shape."""
    dtype: str
    role: str  # "input" | "output"
    rows: int
    cols: int
    """Tile grid of the 2-D view: rows = prod(padded leading dims) * ceil(padded[-2]/32)."""
    padded: tuple[int, ...] = ()
    """Shape in DRAM: grid axes padded to whole waves (zeros in, discarded out);
    empty when equal to `shape`."""

    @property
    def stored_shape(self) -> tuple[int, ...]:
        return self.padded or self.shape


@dataclass(frozen=True)
class Buffer:
    """A circular buffer of `depth` blocks, each `rows x cols` tiles of `dtype`."""

    name: str
    rows: int
    cols: int
    dtype: str
    depth: int
    role: str = "compute"  # "load" | "compute" | "store" | "state" | "gather"

    @property
    def tiles(self) -> int:
        return self.rows * self.cols

    def footprint_tiles(self) -> int:
        return self.tiles * self.depth


@dataclass(frozen=True)
class Pipe:
    """One NoC transfer route: from core `src` = (y, x) to the rectangle of cores
    rows [dst_y0, dst_y1) x columns [dst_x0, dst_x1) (a single core for unicast)."""

    src: tuple[int, int]
    dst_y: tuple[int, int]
    dst_x: tuple[int, int]

    @property
    def receivers(self) -> tuple[tuple[int, int], ...]:
        return tuple((y, x) for y in range(*self.dst_y) for x in range(*self.dst_x))

    @property
    def is_multicast(self) -> bool:
        return len(self.receivers) > 1


@dataclass(frozen=True)
class PipeNet:
    """A set of pipes used by one transfer pattern (a multicast operand or a gather).

    A core sends on the pipe whose `src` it is and receives on every pipe whose
    rectangle contains it, in the order the pipes are listed."""

    name: str
    kind: str  # "multicast" | "gather"
    pipes: tuple[Pipe, ...]


# ----- compute expressions -----------------------------------------------------------


@dataclass(frozen=True)
class CExpr:
    """Base class of block-level compute expressions (values of `rows x cols` tiles)."""


@dataclass(frozen=True)
class BlockRef(CExpr):
    """The block of `buffer` acquired by an enclosing `Wait`."""

    buffer: str


@dataclass(frozen=True)
class MatmulExpr(CExpr):
    """lhs @ rhs (or lhs @ rhs^T when `transpose_rhs`, lhs^T @ rhs when `transpose_lhs`),
    tile-wise."""

    lhs: CExpr
    rhs: CExpr
    transpose_rhs: bool = False
    transpose_lhs: bool = False


@dataclass(frozen=True)
class BinaryExpr(CExpr):
    op: str  # add | sub | mul | div | maximum | minimum
    lhs: CExpr
    rhs: CExpr


@dataclass(frozen=True)
class UnaryExpr(CExpr):
    op: str  # exp | exp2 | log | recip | neg | sqrt | rsqrt
    operand: CExpr


@dataclass(frozen=True)
class ReduceExpr(CExpr):
    """Row reduction (`max` or `sum`) over the columns of a block: the result is a
    `rows x 1` block with the values in column 0 of each tile. With `dim=-2`, a column
    reduction over the rows: a `1 x cols` block with the values in row 0 of each tile."""

    op: str
    operand: CExpr
    dim: int = -1


@dataclass(frozen=True)
class BroadcastExpr(CExpr):
    """Replicate column 0 of a `rows x 1` block across `cols` tile columns; with `rows`
    set, replicate row 0 of a `1 x cols` block down `rows` tile rows instead (a 1-D
    vector broadcast over the rows of a matrix)."""

    operand: CExpr
    cols: int
    rows: int = 0


@dataclass(frozen=True)
class FillExpr(CExpr):
    value: float
    rows: int
    cols: int


# ----- statements --------------------------------------------------------------------


@dataclass(frozen=True)
class Stmt:
    """Base class of stream statements."""


@dataclass(frozen=True)
class Loop(Stmt):
    var: Sym
    count: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class IfCore(Stmt):
    """Branch on the core's coordinates (a multicast sender, the owner of a gather)."""

    cond: Cond
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Reserve(Stmt):
    """Producer scope: wait for a free block of `buffer`, run `body`, push the block."""

    buffer: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Wait(Stmt):
    """Consumer scope: wait for a filled block of each buffer, run `body`, pop them."""

    buffers: tuple[str, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class ReadDram(Stmt):
    """Copy tiles [row, row+rows) x [col, col+cols) of `tensor` into the reserved block."""

    buffer: str
    tensor: str
    row: Expr
    col: Expr
    rows: int
    cols: int


@dataclass(frozen=True)
class WriteDram(Stmt):
    """Copy the waited block of `buffer` to tiles [row, row+rows) x [col, col+cols)."""

    buffer: str
    tensor: str
    row: Expr
    col: Expr
    rows: int
    cols: int


@dataclass(frozen=True)
class Send(Stmt):
    """Send the acquired block of `buffer` on this core's pipe of `net`."""

    buffer: str
    net: str


@dataclass(frozen=True)
class Receive(Stmt):
    """Receive into the reserved block of `buffer` from the pipe of `net` reaching this
    core (a multicast receiver)."""

    buffer: str
    net: str


@dataclass(frozen=True)
class ReceiveAll(Stmt):
    """For each pipe of `net` that reaches this core, in net order: reserve a block of
    `buffer`, receive into it and push it (the owner of a gather)."""

    buffer: str
    net: str


@dataclass(frozen=True)
class ReceiveEach(Stmt):
    """For each pipe of `net` that reaches this core, in net order: for each of `buffers`
    in turn, reserve a block, receive into it from that pipe and push it (the owner of a
    gather whose senders send several values per partial). `ReceiveAll(b, net)` is
    `ReceiveEach((b,), net)`."""

    buffers: tuple[str, ...]
    net: str


@dataclass(frozen=True)
class Parallel(Stmt):
    """Issue the copies together and wait for all of them."""

    copies: tuple[Stmt, ...]


@dataclass(frozen=True)
class Compute(Stmt):
    """Evaluate `expr` and store it into the reserved block of `dst`.

    With `accumulate` the reserved block is an accumulator held open by an enclosing
    `Reserve` across a loop (packer L1 accumulation): a `FillExpr` starts it, every other
    expression is added into it (the packer reads the block's value and writes the sum),
    and the block is pushed when the `Reserve` ends."""

    dst: str
    expr: CExpr
    accumulate: bool = False


@dataclass(frozen=True)
class Program:
    kernel: str
    arch: str
    grid: tuple[int, int]
    """(rows y, columns x) of cores running the program."""
    tensors: tuple[DramTensor, ...]
    buffers: tuple[Buffer, ...]
    nets: tuple[PipeNet, ...]
    reader: tuple[Stmt, ...]
    compute: tuple[Stmt, ...]
    writer: tuple[Stmt, ...]
    math_fidelity: str = "HiFi4"
    notes: tuple[str, ...] = field(default=())

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def tensor(self, name: str) -> DramTensor:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def net(self, name: str) -> PipeNet:
        for n in self.nets:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def streams(self) -> tuple[tuple[str, tuple[Stmt, ...]], ...]:
        return (("reader", self.reader), ("compute", self.compute), ("writer", self.writer))


def walk_stmts(stmts: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Pre-order walk through loops, branches, scopes and parallel groups."""
    for s in stmts:
        yield s
        match s:
            case Loop(body=body) | Reserve(body=body) | Wait(body=body):
                yield from walk_stmts(body)
            case IfCore(then=then, orelse=orelse):
                yield from walk_stmts(then)
                yield from walk_stmts(orelse)
            case Parallel(copies=copies):
                yield from walk_stmts(copies)
