"""Row streaming (task.streaming=row): one synchronisation per shard row of tiles.

A core owns a contiguous run of W tile columns (its shard) and, per tile row, receives
each streamed operand as one 1xW block, computes the row and writes it as one block.
A tile expression is rewritten for 1xW blocks: operands read at the output's own tile
column are "wide" (1xW); frames, constants and hoisted values stay "narrow" (1x1).
Block algebra allows narrow @ wide (a left operator acts on every tile of the row) and
element-wise wide x wide; a narrow value joins a wide one only through a right operator
it is multiplied by (`x @ K` becomes `x @ [K K ... K]`, a 1xW row of the operator).
What this cannot express is reported as the reason row streaming is illegal.
"""

from __future__ import annotations

from loom.cuda.tileflow import FlowKernel
from loom.ir.program import BinaryExpr, BlockRef, CExpr, FillExpr, MatmulExpr, UnaryExpr


def shard_width(nc: int, grid_x: int, cols: int) -> tuple[int, int]:
    """(W, cores) for a range of `nc` tile columns in an array of `cols`: the narrowest
    shard W whose ceil(nc / W) cores (at most grid_x) cover a whole number of shards
    inside the array (the added tiles are masked out)."""
    w = -(-nc // min(nc, grid_x))
    while -(-nc // w) * w > cols:
        w += 1
    return w, -(-nc // w)


class RowError(Exception):
    """Why a kernel's tile expression has no shard-row form."""


def wide_operands(k: FlowKernel) -> frozenset[str]:
    """Operands streamed as 1xW blocks: read at the output's own tile column."""
    return frozenset(o.name for o in k.operands if o.col.base == "c" and o.col.delta == 0)


def row_problem(k: FlowKernel) -> str | None:
    """None when `k` has a shard-row form, else the reason it has none."""
    if k.contraction is not None:
        return "its reduction already streams blocks along k (use tileplan.strip_mine)"
    for o in k.operands:
        if o.col.base == "c" and o.col.delta != 0:
            return (
                f"operand {o.name} is read one tile column off the output's ({o.array}"
                f"[..][c{o.col.delta:+d}]), and its within-tile column shift is a right "
                "operator (X @ S) that a 1xW block matmul would contract across the shard "
                "row instead of applying per tile"
            )
        if "c" in (o.row.base,) or o.col.base == "r":
            return f"operand {o.name} is read transposed (its row follows the output column)"
    try:
        widen(k, k.expr)
    except RowError as err:
        return str(err)
    return None


def widen(  # noqa: C901 - one match per expression form
    k: FlowKernel, e: CExpr
) -> tuple[CExpr, frozenset[str]]:
    """The expression on 1xW blocks and the constants it now reads as 1xW rows."""
    wide = wide_operands(k)
    sunk = {n for n, _ in k.sunk}
    consts = {c.name for c in k.consts} | sunk
    rows: set[str] = set()

    def shape(x: CExpr) -> str:
        match x:
            case BlockRef(buffer=b):
                return "wide" if b in wide else "narrow"
            case FillExpr():
                return "scalar"
            case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t):
                sa, sb = shape(a), shape(b)
                if sa == "wide":
                    raise RowError(
                        "a shard row is multiplied by a right operator (X @ S), which a 1xW "
                        "block matmul contracts across the row instead of applying per tile"
                    )
                if t and sb == "wide":
                    raise RowError("a shard row is used as a transposed right operand")
                return sb
            case BinaryExpr(lhs=a, rhs=b):
                sa, sb = shape(a), shape(b)
                return "wide" if "wide" in (sa, sb) else ("narrow" if "narrow" in (sa, sb) else sa)
            case UnaryExpr(operand=a):
                return shape(a)
        raise RowError(f"{type(x).__name__} has no shard-row form")

    def grow(x: CExpr) -> CExpr:
        """A narrow value as a 1xW row: only through a right operator it multiplies."""
        match x:
            case FillExpr(value=v):
                return FillExpr(v, 1, 1)
            case MatmulExpr(lhs=a, rhs=BlockRef(buffer=b), transpose_rhs=False) if b in consts:
                rows.add(b)  # a sunk selector keeps its name: DM delivers it per row
                return MatmulExpr(a, BlockRef(b if b in sunk else f"{b}_w"))
            case MatmulExpr(lhs=a, rhs=b, transpose_rhs=False):
                return MatmulExpr(a, grow(b))
            case BinaryExpr(op=op, lhs=a, rhs=b):
                return BinaryExpr(op, grow(a), grow(b))
            case UnaryExpr(op=op, operand=a):
                return UnaryExpr(op, grow(a))
        raise RowError(
            f"a one-tile value ({_name(x)}) is combined element-wise with a shard row and "
            "reaches it through no right operator that could be repeated along the row"
        )

    def fit(x: CExpr) -> CExpr:
        s = shape(x)
        if s == "wide":
            match x:
                case BinaryExpr(op=op, lhs=a, rhs=b):
                    return BinaryExpr(op, fit(a), fit(b))
                case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t):
                    return MatmulExpr(a, fit(b), t)
                case UnaryExpr(op=op, operand=a):
                    return UnaryExpr(op, fit(a))
            return x
        if s == "scalar":
            return x
        return grow(x)

    out = fit(e)
    return out, frozenset(rows)


def _name(x: CExpr) -> str:
    return x.buffer if isinstance(x, BlockRef) else type(x).__name__
