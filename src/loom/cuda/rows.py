"""Row streaming (task.streaming=row): one synchronisation per shard row of tiles.

A core owns a contiguous run of W tile columns (its shard) and, per tile row, receives
each streamed operand as one 1xW block, computes the row and writes it as one block.
A tile expression is rewritten for 1xW blocks: operands read at the output's own tile
column are "wide" (1xW); frames, constants and hoisted values stay "narrow" (1x1).
Block algebra allows narrow @ wide (a left operator acts on every tile of the row) and
element-wise wide x wide; a narrow value joins a wide one only through a right operator
it is multiplied by (`x @ K` becomes `x @ [K K ... K]`, a 1xW row of the operator).

A column shift (jacobi's west/east neighbours, `X @ S_in + X[c+d] @ S_edge`) is a right
operator applied per tile, which a 1xW block matmul would contract across the row. It
is rewritten on the whole row as one (32W)x(32W) band operator, `X @ B` with B's block
(t, t) = S_in and block (t+d, t) = S_edge (the neighbour inside the shard; every shift of
one array and row in one add chain summed into one band), plus, per neighbour tile
outside the shard (the halo, read as one tile), `H @ E` with E a 1xW row holding S_edge
at the shard's first (d < 0) or last (d > 0) tile and zeros elsewhere. The block matmul
is W^2 tile matmuls (the band's zero blocks included) and each halo term W.
What this cannot express is reported as the reason row streaming is illegal.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.cuda.consts import ConstSpec
from loom.cuda.tileflow import FlowKernel, Operand, block_refs
from loom.ir.program import BinaryExpr, BlockRef, CExpr, FillExpr, MatmulExpr, UnaryExpr


@dataclass(frozen=True, slots=True)
class RowShift:
    """A column shift of one operand's shard row: `own @ band + sum(halo @ edge row)`."""

    own: str
    band: str
    """The WxW operator: block (t + d, t) is the sum of the constants listed for d."""
    terms: tuple[tuple[int, str], ...]
    """(tile column offset d, right-operator constant)."""
    edges: tuple[tuple[str, str, int, str], ...]
    """(1xW edge row, halo operand, d, constant): the constant at the shard's first tile
    (d < 0) or last tile (d > 0), zeros elsewhere."""


def band_columns(sh: RowShift, specs: dict[str, ConstSpec], width: int) -> tuple[ConstSpec, ...]:
    """The band operator's W tile columns: column t stacks, in block row t + d, the
    constants of the terms with offset d (none: a zero block)."""
    return tuple(
        ConstSpec(
            "stack",
            stack=tuple(tuple(specs[c] for d, c in sh.terms if i == t + d) for i in range(width)),
        )
        for t in range(width)
    )


def edge_row(d: int, spec: ConstSpec, width: int) -> tuple[ConstSpec, ...]:
    """A halo's 1xW edge row: its patch at the shard's first (d < 0) or last tile."""
    at = 0 if d < 0 else width - 1
    return tuple(spec if t == at else ConstSpec("zero") for t in range(width))


@dataclass(frozen=True, slots=True)
class RowForm:
    """A kernel's tile expression on 1xW blocks."""

    expr: CExpr
    repeated: frozenset[str]
    """Right operators repeated along the row (read as 1xW rows)."""
    shifts: tuple[RowShift, ...] = ()

    def operator_shape(self, name: str, width: int) -> tuple[int, int] | None:
        """Tile shape of a multi-tile operator this form reads, None for others."""
        if any(name == s.band for s in self.shifts):
            return (width, width)
        repeated = name in self.repeated or (name.endswith("_w") and name[:-2] in self.repeated)
        if repeated or any(name == e[0] for s in self.shifts for e in s.edges):
            return (1, width)
        return None


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
        return (
            "its reduction has no shard-row form (Loom's own rule: the seed's rule, a value "
            "crossing compute -> DM -> compute inside the column loop, does not cover it, "
            "since the reduction's panels only flow DM -> compute; Loom streams a reduction "
            "in blocks along k instead, with tileplan.strip_mine and interchange)"
        )
    for o in k.operands:
        if "c" in (o.row.base,) or o.col.base == "r":
            return f"operand {o.name} is read transposed (its row follows the output column)"
    try:
        widen(k, k.expr)
    except RowError as err:
        return str(err)
    return None


def widen(  # noqa: C901 - one match per expression form
    k: FlowKernel, e: CExpr
) -> RowForm:
    """The expression on 1xW blocks, the constants it reads as 1xW rows, its shifts."""
    wide = wide_operands(k)
    sunk = {n for n, _ in k.sunk}
    consts = {c.name for c in k.consts} | sunk
    rows: set[str] = set()
    found: list[RowShift] = []
    e = _shift_rows(k, e, found)
    bands = {s.band for s in found}
    edges = {x[0] for s in found for x in s.edges}
    halos = {o.name for o in k.operands if o.col.base == "c" and o.col.delta != 0}

    def shape(x: CExpr) -> str:  # noqa: C901 - one case per form
        match x:
            case BlockRef(buffer=b):
                if b in bands:
                    return "band"
                if b in halos:
                    return "halo"
                return "wide" if b in wide or b in edges else "narrow"
            case FillExpr():
                return "scalar"
            case MatmulExpr(lhs=BlockRef(buffer=h), rhs=BlockRef(buffer=b)) if b in edges:
                if h not in halos:
                    raise RowError(f"edge row {b} applied to {h}, which is no halo tile")
                return "wide"
            case MatmulExpr(lhs=a, rhs=BlockRef(buffer=b)) if b in bands:
                if shape(a) != "wide":
                    raise RowError(f"band operator {b} applied to a one-tile value")
                return "wide"
            case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t):
                sa, sb = shape(a), shape(b)
                if "halo" in (sa, sb):
                    h = min(n for n in block_refs(x) if n in halos)
                    raise RowError(
                        f"operand {h} is read one tile column off the output's, and is used "
                        "other than as the neighbour patch of a column shift (X @ S_in + "
                        "X[c+d] @ S_edge), the one form that becomes a band operator on the row"
                    )
                if sa == "wide":
                    raise RowError(
                        "a shard row is multiplied by a right operator (X @ S), which a 1xW "
                        "block matmul contracts across the row instead of applying per tile"
                    )
                if t and sb == "wide":
                    raise RowError(
                        "a shard row is used as a transposed right operand (X^T, as "
                        "tileflow.halo=transposed does): the transpose of a 1xW block is a Wx1 "
                        "column, not the row of its transposed tiles (with halo: tile a column "
                        "shift becomes a band operator on the row)"
                    )
                return sb
            case BinaryExpr(lhs=a, rhs=b):
                sa, sb = shape(a), shape(b)
                if "halo" in (sa, sb):
                    raise RowError(
                        "a neighbour tile column is combined element-wise with a shard row, "
                        "which has no 1xW form"
                    )
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
        if s == "band":
            return x
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
    return RowForm(out, frozenset(rows), tuple(found))


def _shift_term(k: FlowKernel, t: CExpr) -> tuple[Operand, str] | None:
    """(operand, constant) of `X @ K` with X read in the output's tile column or one off,
    and K a held right-operator constant: a term of a column shift."""
    match t:
        case MatmulExpr(lhs=BlockRef(buffer=x), rhs=BlockRef(buffer=c), transpose_rhs=False):
            ops = {o.name: o for o in k.operands}
            held = {c.name for c in k.consts} - {n for n, _ in k.sunk}
            o = ops.get(x)
            if o is None or c not in held or _own(k, o) is None:
                return None
            if o.col.base == "c" and abs(o.col.delta) <= 1:
                return o, c
    return None


def _own(k: FlowKernel, o: Operand) -> Operand | None:
    """The operand read at the same row and the output's own tile column."""
    return next(
        (
            p
            for p in k.operands
            if p.array == o.array and p.row == o.row and p.col.base == "c" and p.col.delta == 0
        ),
        None,
    )


def _chain(e: CExpr) -> list[CExpr]:
    if isinstance(e, BinaryExpr) and e.op == "add":
        return _chain(e.lhs) + _chain(e.rhs)
    return [e]


def _shift_rows(k: FlowKernel, e: CExpr, found: list[RowShift]) -> CExpr:
    """Each add chain with column-shift terms, regrouped: per (array, row), the terms'
    own-column matmuls and neighbour matmuls become one band matmul on the own row plus
    one edge-row matmul per halo; the chain's other terms keep their order."""
    match e:
        case BinaryExpr(op="add") | MatmulExpr() if any(_shift_term(k, t) for t in _chain(e)):
            terms = [t if _shift_term(k, t) else _shift_rows(k, t, found) for t in _chain(e)]
            return _regroup(k, terms, found)
        case BinaryExpr(op=op, lhs=a, rhs=b):
            return BinaryExpr(op, _shift_rows(k, a, found), _shift_rows(k, b, found))
        case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t):
            return MatmulExpr(_shift_rows(k, a, found), _shift_rows(k, b, found), t)
        case UnaryExpr(op=op, operand=a):
            return UnaryExpr(op, _shift_rows(k, a, found))
    return e


def _regroup(k: FlowKernel, terms: list[CExpr], found: list[RowShift]) -> CExpr:
    groups: dict[str, list[tuple[Operand, str]]] = {}
    slots: list[CExpr | str] = []
    for t in terms:
        hit = _shift_term(k, t)
        if hit is None:
            slots.append(t)
            continue
        own = _own(k, hit[0])
        assert own is not None
        if own.name not in groups:
            groups[own.name] = []
            slots.append(own.name)
        groups[own.name].append(hit)
    parts: list[CExpr] = []
    for slot in slots:
        if not isinstance(slot, str):
            parts.append(slot)
            continue
        band = f"band{len(found)}_{slot}"
        edges = tuple(
            (f"{c}_row{'w' if o.col.delta < 0 else 'e'}", o.name, o.col.delta, c)
            for o, c in groups[slot]
            if o.col.delta
        )
        found.append(RowShift(slot, band, tuple((o.col.delta, c) for o, c in groups[slot]), edges))
        parts.append(MatmulExpr(BlockRef(slot), BlockRef(band)))
        parts.extend(MatmulExpr(BlockRef(h), BlockRef(name)) for name, h, _, _ in edges)
    out = parts[0]
    for p in parts[1:]:
        out = BinaryExpr("add", out, p)
    return out


def _name(x: CExpr) -> str:
    return x.buffer if isinstance(x, BlockRef) else type(x).__name__
