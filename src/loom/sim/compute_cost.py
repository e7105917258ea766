"""Cycles of one Compute statement on a Tensix compute engine.

The engine is a three-stage pipeline (unpack, math, pack threads running concurrently),
so a statement costs its fixed overhead plus the busiest stage, plus filling and
draining the pipeline (one tile-operation's unpack, one tile's pack):

* unpack moves operand tiles from L1 into the source registers at the unpackers' combined
  L1 read bandwidth. A tile-matmul reads both of its operand tiles (one in0 and one in1
  tile), and an elementwise op reads each operand that lives in L1 (a `BlockRef`);
  values computed by a sub-expression stay in Dst.
* math is the sum over the expression's nodes of their per-tile cost over their output
  tiles: `matmul.cycles(fidelity)` per 32x32x32 tile-matmul, the elementwise and
  reduction tables of `arch.compute` otherwise (FPU and SFPU are both issued by the math
  thread, so they serialise).
* pack writes the result tiles into the destination buffer.

`acc + A @ B` with `acc` read from L1 is an accumulating matmul: with packer L1
accumulation (TT-Metal's packer_l1_acc) the packer adds into L1 for free; without it the
accumulator is reloaded into Dst (unpacked and copied) first. A statement marked
`accumulate` adds into the block it holds (Loom's single-block accumulator): its pack is
a read-modify-write of L1 at `compute.pack_accumulate_bytes_per_cycle`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loom.arch import Arch
from loom.errors import SimulationError
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    BroadcastExpr,
    CExpr,
    Compute,
    FillExpr,
    MatmulExpr,
    Program,
    ReduceExpr,
    UnaryExpr,
)
from loom.sim.params import SimParams


@dataclass(frozen=True, slots=True)
class ComputeCost:
    cycles: float
    unpack_cycles: float
    math_cycles: float
    pack_cycles: float
    matmul_tiles: int


@dataclass(slots=True)
class _Tally:
    unpack_bytes: float = 0.0
    math: float = 0.0
    matmul_tiles: int = 0
    tile_ops: int = 0


@dataclass(frozen=True, slots=True)
class _Shape:
    rows: int
    cols: int
    tile_bytes: int

    @property
    def tiles(self) -> int:
        return self.rows * self.cols


class CostModel:
    """Per-statement compute costs of one program on one architecture (memoised)."""

    def __init__(
        self, arch: Arch, params: SimParams, program: Program, packer_l1_acc: bool
    ) -> None:
        self.arch = arch
        self.params = params
        self.packer_l1_acc = packer_l1_acc
        self.matmul_cycles = arch.matmul.cycles(program.math_fidelity)
        self.shapes = {
            b.name: _Shape(b.rows, b.cols, tile_bytes(arch, b.dtype, b.name))
            for b in program.buffers
        }
        # Keyed by identity (hashing a deep expression costs more than the walk); the entry
        # holds the statement so its id cannot be reused by another while the memo lives.
        self._memo: dict[int, tuple[Compute, ComputeCost]] = {}

    def cost(self, stmt: Compute) -> ComputeCost:
        hit = self._memo.get(id(stmt))
        if hit is None:
            hit = self._memo[id(stmt)] = (stmt, self._cost(stmt))
        return hit[1]

    def _cost(self, stmt: Compute) -> ComputeCost:
        dst = self._shape(stmt.dst)
        tally = _Tally()
        self._walk(stmt.expr, tally, dst)
        p = self.params
        unpack = tally.unpack_bytes / p.unpack_bytes_per_cycle
        adds = stmt.accumulate and not isinstance(stmt.expr, FillExpr)
        rate = p.pack_accumulate_bytes_per_cycle if adds else p.pack_bytes_per_cycle
        pack = dst.tiles * dst.tile_bytes / rate
        fill = unpack / tally.tile_ops if tally.tile_ops else 0.0
        drain = pack / dst.tiles if dst.tiles else 0.0
        total = self.arch.compute.op_overhead_cycles + max(unpack, tally.math, pack) + fill + drain
        return ComputeCost(total, unpack, tally.math, pack, tally.matmul_tiles)

    def _shape(self, buffer: str) -> _Shape:
        try:
            return self.shapes[buffer]
        except KeyError:
            raise SimulationError(
                f"a Compute statement reads or writes buffer '{buffer}', which the program "
                "does not declare; add it to Program.buffers"
            ) from None

    def _walk(self, e: CExpr, t: _Tally, dst: _Shape) -> _Shape:
        """Tally the cost of `e`; return its shape (tile_bytes of L1 operands)."""
        match e:
            case BlockRef(buffer=name):
                return self._shape(name)
            case MatmulExpr():
                return self._matmul(e, t, dst)
            case (
                BinaryExpr(op="add", lhs=BlockRef() as acc, rhs=MatmulExpr() as mm)
                | BinaryExpr(op="add", lhs=MatmulExpr() as mm, rhs=BlockRef() as acc)
            ):
                out = self._matmul(mm, t, dst)
                if not self.packer_l1_acc:
                    self._load(self._shape(acc.buffer), t)
                return out
            case BinaryExpr(op=op, lhs=lhs, rhs=rhs):
                a, b = self._operand(lhs, t, dst), self._operand(rhs, t, dst)
                out = _Shape(max(a.rows, b.rows), max(a.cols, b.cols), dst.tile_bytes)
                return self._elementwise(op, out, t)
            case UnaryExpr(op=op, operand=x):
                return self._elementwise(op, self._operand(x, t, dst), t)
            case ReduceExpr(op=op, operand=x, dim=dim):
                a = self._operand(x, t, dst)
                t.math += a.tiles * self._table(self.arch.compute.reduce, op, "reduction")
                t.tile_ops += a.tiles
                if dim == -2:  # a column reduction: one tile row
                    return _Shape(1, a.cols, dst.tile_bytes)
                return _Shape(a.rows, 1, dst.tile_bytes)
            case BroadcastExpr(operand=x, cols=cols, rows=rows):
                a = self._walk(x, t, dst)
                out = _Shape(rows or a.rows, cols, dst.tile_bytes)
                if isinstance(x, BlockRef):
                    t.unpack_bytes += out.tiles * a.tile_bytes
                return self._elementwise("copy", out, t)
            case FillExpr(rows=rows, cols=cols):
                return self._elementwise("copy", _Shape(rows, cols, dst.tile_bytes), t)
        raise SimulationError(f"the simulator has no cost for compute expression {e!r}")

    def _operand(self, x: CExpr, t: _Tally, dst: _Shape) -> _Shape:
        shape = self._walk(x, t, dst)
        if isinstance(x, BlockRef):
            t.unpack_bytes += shape.tiles * shape.tile_bytes
        return shape

    def _load(self, shape: _Shape, t: _Tally) -> None:
        """Reload a block from L1 into Dst (unpack and copy)."""
        t.unpack_bytes += shape.tiles * shape.tile_bytes
        self._elementwise("copy", shape, t)

    def _matmul(self, e: MatmulExpr, t: _Tally, dst: _Shape) -> _Shape:
        a, b = self._walk(e.lhs, t, dst), self._walk(e.rhs, t, dst)
        if e.transpose_lhs:  # a pass of its own over the lhs tiles (in-tile transposes)
            self._load(a, t)
            a = _Shape(a.cols, a.rows, a.tile_bytes)
        n = b.rows if e.transpose_rhs else b.cols
        k_rhs = b.cols if e.transpose_rhs else b.rows
        if a.cols != k_rhs:
            raise SimulationError(
                f"matmul of a {a.rows}x{a.cols}-tile block by a {b.rows}x{b.cols}-tile block "
                f"(transpose_rhs={e.transpose_rhs}): inner dimensions differ"
            )
        tiles = a.rows * n * a.cols
        t.matmul_tiles += tiles
        t.tile_ops += tiles
        t.math += tiles * self.matmul_cycles
        t.unpack_bytes += tiles * (a.tile_bytes + b.tile_bytes)
        return _Shape(a.rows, n, dst.tile_bytes)

    def _elementwise(self, op: str, out: _Shape, t: _Tally) -> _Shape:
        t.math += out.tiles * self._table(self.arch.compute.eltwise, op, "elementwise op")
        t.tile_ops += out.tiles
        return out

    @staticmethod
    def _table(lookup: Callable[[str], int], op: str, what: str) -> int:
        try:
            return lookup(op)
        except KeyError:
            raise SimulationError(
                f"the architecture gives no cost for {what} '{op}'; add it to the "
                "architecture's compute tables"
            ) from None


def tile_bytes(arch: Arch, dtype: str, buffer: str) -> int:
    try:
        return arch.tile.bytes(dtype)
    except KeyError:
        raise SimulationError(
            f"buffer '{buffer}' has dtype '{dtype}', which architecture '{arch.name}' does "
            f"not size; known dtypes: {', '.join(arch.tile.dtypes)}"
        ) from None
