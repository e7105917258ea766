"""Checkpoint 2, TileFlow: every access factored into source tile and within-tile map.

An access `X[i + di][j + dj]` reads the output's own tile (shifted within the tile and
patched from the neighbour tile when di or dj is non-zero), `X[i][t + e]` reads column
t+e of a tile in another tile column and broadcasts it along the row, `X[t + e][j]`
broadcasts a row, `X[t + e][t + f]` a scalar. Within-tile maps are realized as tile
matmuls by constant operator tiles (selectors, shifts), which Loom's compute engine and
TT-Lang both have; the constants are prepared once per launch and kept in L1 for the
whole tile loop (frame reuse). Reductions `sum_k X[i][k] * Y[j][k]` become panel
deliveries and a blocked matmul.

Policies: `stencil_operator` (one shift operator per neighbour, or the in-tile shifts of
one axis summed into one operator: the analogue of the seed's transpose-pair
simplification T(a)+T(b) = T(a+b)), `guard_copy` (a guarded copy's unmasked tiles moved
by DM alone). The seed's DM-side reciprocal and transposed-basis halo need DM-side
arithmetic or sub-tile copies, which Loom's Program does not have; only their compute
forms are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.cuda.annotations import Annotations
from loom.cuda.ir import Affine, Bin, Load, Num, Param, Sum, Value
from loom.cuda.tileplan import TILE, TileKernel, TilePlan, format_value
from loom.errors import AnnotationError, CudaSubsetError
from loom.ir.program import BinaryExpr, BlockRef, CExpr, FillExpr, MatmulExpr, UnaryExpr


@dataclass(frozen=True, slots=True)
class TileIndex:
    """A source tile coordinate: the output tile's own (`base` "r"/"c") plus `delta`
    tiles, or the tile holding element `elem` (an affine form of launch parameters)."""

    base: str | None
    delta: int = 0
    elem: Affine | None = None

    def __str__(self) -> str:
        if self.base:
            return self.base + (f"{self.delta:+d}" if self.delta else "")
        return f"({self.elem})/32"


@dataclass(frozen=True, slots=True)
class Operand:
    """One delivered block of `array`: tiles [row, row+rows) x [col, col+cols)."""

    name: str
    array: str
    row: TileIndex
    col: TileIndex
    rows: int = 1
    cols: int = 1
    role: str = "tile"  # tile | halo | frame | panel


@dataclass(frozen=True, slots=True)
class ConstTile:
    """A constant operator tile, prepared per launch: `kind` with lane `arg`."""

    name: str
    kind: str  # col_select | row_select | hshift_in | hshift_edge | vshift_in | vshift_edge
    arg: Affine
    arg2: int = 0


@dataclass(frozen=True, slots=True)
class Contraction:
    """acc += lhs @ rhs (rhs transposed when `transpose`) over the reduction blocks."""

    lhs: Operand
    rhs: Operand
    transpose: bool
    scale: float
    blocks: int
    """Reduction deliveries per output tile (extent / 32 / strip)."""


@dataclass(frozen=True, slots=True)
class HaloConversion:
    """tileflow.halo_conversion=sender: the edge patch `patch` = `halo` tile x `edge`
    operator is computed by the core that owns the halo tile, from its own tile `own`,
    and sent to its neighbour `step` cores away along `axis` ("x" or "y")."""

    patch: str
    halo: str
    own: str
    edge: str
    axis: str
    step: int

    def convert(self, tile: str) -> CExpr:
        a, k = BlockRef(tile), BlockRef(self.edge)
        return MatmulExpr(a, k) if self.axis == "x" else MatmulExpr(k, a)


@dataclass(frozen=True, slots=True)
class FlowKernel:
    key: str
    tile: TileKernel
    operands: tuple[Operand, ...]
    consts: tuple[ConstTile, ...]
    expr: CExpr
    """The tile value over operand/const buffer names (and `acc` for a contraction)."""
    old: str
    """Operand holding the target's current tile (the masked overlay keeps it)."""
    contraction: Contraction | None
    dm_copy: bool
    """Unmasked tiles are a pure copy of `expr`'s one operand, moved by DM."""
    derived: tuple[str, ...]
    hoisted: tuple[tuple[str, CExpr], ...] = ()
    """(buffer, value) evaluated once per core before the tile loop, from launch-invariant
    operands and constants, and held for the whole launch."""
    conversions: tuple[HaloConversion, ...] = ()
    """Edge patches converted by the sender (`expr` reads each `patch` buffer)."""
    sunk: tuple[tuple[str, str], ...] = ()
    """tileflow.guard_mask=dm: (selector constant, "row" | "col") that DM delivers per
    tile masked to the guard; the kernel then has no masked overlay."""


@dataclass(frozen=True, slots=True)
class TileFlow:
    plan: TilePlan
    kernels: tuple[FlowKernel, ...]
    scalars: tuple[tuple[str, float], ...]

    def kernel(self, key: str) -> FlowKernel:
        return next(k for k in self.kernels if k.key == key)


def build_tileflow(plan: TilePlan, ann: Annotations) -> TileFlow:
    scalars = _float_scalars(plan)
    kernels = tuple(_Flow(plan, k, ann, dict(scalars)).build() for k in plan.kernels)
    return TileFlow(plan, kernels, scalars)


def _float_scalars(plan: TilePlan) -> tuple[tuple[str, float], ...]:
    """Float parameters must take one value across all launches (they become fills)."""
    seen: dict[str, float] = {}
    for step, _ in plan.launches():
        for name, v in step.args:
            if isinstance(v, float):
                if name in seen and seen[name] != v:
                    raise CudaSubsetError(
                        f"{plan.path}: float parameter `{name}` takes different values across "
                        "launches; Loom bakes float parameters into the kernel."
                    )
                seen[name] = v
    return tuple(sorted(seen.items()))


def dm_scaling_error(where: str, kernel: str) -> AnnotationError:
    """The seed's DM-side scaling has no TT-Lang 1.1.6 form: in a data-movement kernel a
    block admits only copy (to or from it), the copy's wait, and push/pop (tt-lang-sim's
    block state machine has no store for DM kernels); arithmetic on blocks yields
    temporaries that are not buffer-backed and cannot be copied; a block cannot be
    indexed by element (no scalar reads); and tile-layout copies move whole tiles."""
    return AnnotationError(
        f"{where}: tileflow.scaling=dm is illegal for `{kernel}`: a TT-Lang data-movement "
        "kernel can only copy whole tiles into or out of a buffer block (it cannot store an "
        "expression into a block, copy an arithmetic result, or read a scalar out of a "
        "tile), so it cannot form a scaled tile; keep scaling: compute."
    )


class _Flow:
    def __init__(
        self, plan: TilePlan, k: TileKernel, ann: Annotations, scalars: dict[str, float]
    ) -> None:
        self.plan, self.k, self.ann, self.scalars = plan, k, ann, scalars
        self.operands: dict[tuple[str, TileIndex, TileIndex], Operand] = {}
        self.consts: dict[tuple[str, Affine, int], ConstTile] = {}
        self.derived: list[str] = []
        self.hoisted: dict[str, CExpr] = {}

    def build(self) -> FlowKernel:
        k = self.k
        if self.ann.tileflow.scaling == "dm":
            raise dm_scaling_error(f"{self.plan.path}:{k.line}", k.kernel)
        old = self.operand(k.target, TileIndex("r"), TileIndex("c"))
        contraction = None
        value = k.value
        if k.reduction is not None:
            contraction, value = self.contraction(value)
        expr = self.value(value)
        conversions: list[HaloConversion] = []
        if self.ann.tileflow.halo_conversion == "sender":
            expr = self.sender_side(expr, conversions)
        sunk = self.sink_guard(expr, old.name) if self.ann.tileflow.guard_mask == "dm" else ()
        dm_copy = self.ann.tileflow.guard_copy == "dm" and isinstance(k.value, Load)
        if (
            self.ann.tileflow.guard_copy == "dm"
            and not isinstance(k.value, Load)
            and (not any(isinstance(v, Load) and v.array == k.target for v in [k.value]))
        ):
            self.derived.append("guard_copy=dm has no effect: the kernel is not a plain copy")
        if dm_copy:
            self.derived.append("unmasked tiles: DM copy (no compute)")
        frames = [c.name for c in self.consts.values()]
        if frames:
            self.derived.append(f"frames reused across the tile loop: {', '.join(frames)}")
        halos = [o.name for o in self.operands.values() if o.role == "halo"]
        if halos:
            self.derived.append(
                f"partly-local transfers split into own tile + halo tiles: {', '.join(halos)}"
            )
        shared = [
            o.name for o in self.operands.values() if o.row.base is None or o.col.base is None
        ]
        if shared:
            self.derived.append(
                f"multicast candidates (same tile for a whole core row/column): "
                f"{', '.join(shared)} (multicast when the core grid divides the tile range)"
            )
        ops = tuple(self.operands.values())
        return FlowKernel(
            k.key,
            k,
            ops,
            tuple(self.consts.values()),
            expr,
            old.name,
            contraction,
            dm_copy,
            tuple(self.derived),
            tuple(self.hoisted.items()),
            tuple(conversions),
            sunk,
        )

    # ----- operands ---------------------------------------------------------------------
    def operand(
        self,
        array: str,
        row: TileIndex,
        col: TileIndex,
        role: str = "tile",
        rows: int = 1,
        cols: int = 1,
    ) -> Operand:
        key = (array, row, col)
        if key not in self.operands:
            name = f"{array}_{_slug(row)}_{_slug(col)}".lower()
            self.operands[key] = Operand(name, array, row, col, rows, cols, role)
        return self.operands[key]

    def const(self, kind: str, arg: Affine, arg2: int = 0) -> CExpr:
        key = (kind, arg, arg2)
        if key not in self.consts:
            self.consts[key] = ConstTile(f"k{len(self.consts)}_{kind}", kind, arg, arg2)
        return BlockRef(self.consts[key].name)

    # ----- values -----------------------------------------------------------------------
    def value(self, v: Value) -> CExpr:
        match v:
            case Num(value=x):
                return FillExpr(x, 1, 1)
            case Param(name=n) if n in self.scalars:
                return FillExpr(self.scalars[n], 1, 1)
            case Bin(op="add") if self.ann.tileflow.stencil_operator == "fused":
                return self.fused_sum(v)
            case Bin(op="div", lhs=a, rhs=b) if self.ann.tileflow.reciprocal == "hoisted":
                return self.hoisted_division(a, b)
            case Bin(op=op, lhs=a, rhs=b):
                return BinaryExpr(op, self.value(a), self.value(b))
            case Load():
                return self.load(v)
            case Param(name="acc"):
                return BlockRef("acc")
        raise CudaSubsetError(
            f"{self.plan.path}:{self.k.line}: value {v} of `{self.k.kernel}` is outside the "
            "tile realizations Loom has."
        )

    def axis(self, a: Affine, own: str) -> tuple[str, int | Affine]:
        """('own', d) for own-index + d, ('param', elem) for a launch-parameter form."""
        names = a.names
        if own in names:
            if a.coef(own) != 1 or len(names) != 1:
                raise self.bad(f"index {a} mixes the output index {own} with other variables")
            return ("own", a.const)
        if names & {"i", "j", "k"}:
            raise self.bad(f"index {a} uses the other axis' index (a transposed access)")
        return ("param", a)

    def bad(self, what: str) -> CudaSubsetError:
        return CudaSubsetError(
            f"{self.plan.path}:{self.k.line}: in `{self.k.kernel}`, {what}; Loom realizes "
            "own-tile accesses with small shifts (|d| < 32), row/column/scalar broadcasts of "
            "launch-parameter indices, and A[i][k]*B[j][k] reductions."
        )

    def load(self, ld: Load) -> CExpr:
        rk, rv = self.axis(ld.row, "i")
        ck, cv = self.axis(ld.col, "j")
        if rk == "own" and ck == "own":
            assert isinstance(rv, int) and isinstance(cv, int)
            return self.shifted(ld.array, rv, cv)
        if rk == "own" and ck == "param":
            assert isinstance(rv, int) and isinstance(cv, Affine)
            if rv:
                raise self.bad("a column broadcast with a row shift")
            x = self.operand(ld.array, TileIndex("r"), TileIndex(None, 0, cv), "frame")
            return MatmulExpr(BlockRef(x.name), self.const("col_select", cv))
        if rk == "param" and ck == "own":
            assert isinstance(cv, int) and isinstance(rv, Affine)
            if cv:
                raise self.bad("a row broadcast with a column shift")
            x = self.operand(ld.array, TileIndex(None, 0, rv), TileIndex("c"), "frame")
            return MatmulExpr(self.const("row_select", rv), BlockRef(x.name))
        assert isinstance(rv, Affine) and isinstance(cv, Affine)
        x = self.operand(ld.array, TileIndex(None, 0, rv), TileIndex(None, 0, cv), "frame")
        inner = MatmulExpr(self.const("row_select", rv), BlockRef(x.name))
        return MatmulExpr(inner, self.const("col_select", cv))

    def shifted(self, array: str, di: int, dj: int) -> CExpr:
        if di and dj:
            raise self.bad(f"a diagonal shift ({di}, {dj})")
        if abs(di) >= TILE or abs(dj) >= TILE:
            raise self.bad(f"a shift of ({di}, {dj}) elements, a tile or more")
        own = BlockRef(self.operand(array, TileIndex("r"), TileIndex("c")).name)
        if dj and self.ann.tileflow.halo == "transposed":
            s = 1 if dj > 0 else -1
            edge = self.operand(array, TileIndex("r"), TileIndex("c", s), "halo")
            d = Affine.num(dj)
            # X @ S = (S^T @ X^T)^T: a row shift and a row patch of the transposed
            # tiles, transposed back by a matmul with the identity
            rows = BinaryExpr(
                "add",
                MatmulExpr(self.const("hshift_in_t", d), own, transpose_rhs=True),
                MatmulExpr(self.const("hshift_edge_t", d), BlockRef(edge.name), transpose_rhs=True),
            )
            note = "column shifts applied in the transposed basis (row patches)"
            if note not in self.derived:
                self.derived.append(note)
            return MatmulExpr(self.const("identity", Affine.num(0)), rows, transpose_rhs=True)
        if dj:
            s = 1 if dj > 0 else -1
            edge = self.operand(array, TileIndex("r"), TileIndex("c", s), "halo")
            return BinaryExpr(
                "add",
                MatmulExpr(own, self.const("hshift_in", Affine.num(dj))),
                MatmulExpr(BlockRef(edge.name), self.const("hshift_edge", Affine.num(dj))),
            )
        if di:
            s = 1 if di > 0 else -1
            edge = self.operand(array, TileIndex("r", s), TileIndex("c"), "halo")
            return BinaryExpr(
                "add",
                MatmulExpr(self.const("vshift_in", Affine.num(di)), own),
                MatmulExpr(self.const("vshift_edge", Affine.num(di)), BlockRef(edge.name)),
            )
        return own

    def fused_sum(self, v: Value) -> CExpr:
        """An add chain with in-tile shifts of one array along one axis: one matmul by
        the summed shift operator, plus the edge patches."""
        if self.ann.tileflow.halo == "transposed":
            raise AnnotationError(
                f"{self.plan.path}:{self.k.line}: tileflow.halo=transposed with "
                f"stencil_operator=fused is illegal for `{self.k.kernel}`: the fused operator "
                "sums the column shifts in the original basis; choose one of the two."
            )
        terms = _add_terms(v)
        groups: dict[tuple[str, str], list[int]] = {}
        rest: list[Value] = []
        for t in terms:
            if isinstance(t, Load):
                rk, rv = self.axis(t.row, "i")
                ck, cv = self.axis(t.col, "j")
                if rk == ck == "own" and (rv == 0) != (cv == 0):
                    assert isinstance(rv, int) and isinstance(cv, int)
                    axis = "h" if rv == 0 else "v"
                    groups.setdefault((t.array, axis), []).append(cv if axis == "h" else rv)
                    continue
            rest.append(t)
        parts: list[CExpr] = [self.value(t) for t in rest]
        for (array, axis), shifts in groups.items():
            if len(shifts) == 1:
                d = shifts[0]
                parts.append(self.shifted(array, 0 if axis == "h" else d, d if axis == "h" else 0))
                continue
            own = BlockRef(self.operand(array, TileIndex("r"), TileIndex("c")).name)
            code = sum(1 << (d + TILE) for d in shifts)
            op = self.const(f"{axis}shift_sum", Affine.num(code))
            parts.append(MatmulExpr(own, op) if axis == "h" else MatmulExpr(op, own))
            for d in shifts:
                s = 1 if d > 0 else -1
                row, col = (
                    (TileIndex("r"), TileIndex("c", s))
                    if axis == "h"
                    else (TileIndex("r", s), TileIndex("c"))
                )
                edge = BlockRef(self.operand(array, row, col, "halo").name)
                k = self.const(f"{axis}shift_edge", Affine.num(d))
                parts.append(MatmulExpr(edge, k) if axis == "h" else MatmulExpr(k, edge))
            self.derived.append(
                f"in-tile {axis}-shifts of {array} {shifts} fused into one operator"
            )
        out = parts[0]
        for p in parts[1:]:
            out = BinaryExpr("add", out, p)
        return out

    def sink_guard(self, e: CExpr, old: str) -> tuple[tuple[str, str], ...]:
        """old -/+ (X @ col_select) * (row_select @ Y): on inactive lanes the product is
        0 once the selectors are masked (column selector to the active columns, row
        selector to the active rows), so old is kept exactly without an overlay."""
        kinds = {c.name: c.kind for c in self.consts.values()}
        match e:
            case BinaryExpr(
                op="sub" | "add", lhs=BlockRef(buffer=o), rhs=BinaryExpr(op="mul") as t
            ) if o == old:
                sel: list[tuple[str, str]] = []
                for f in (t.lhs, t.rhs):
                    match f:
                        case MatmulExpr(rhs=BlockRef(buffer=k)) if kinds.get(k) == "col_select":
                            sel.append((k, "col"))
                        case MatmulExpr(lhs=BlockRef(buffer=k)) if kinds.get(k) == "row_select":
                            sel.append((k, "row"))
                if len(sel) == 2 and sel[0][1] != sel[1][1]:
                    self.derived.append(
                        "guard sunk into the broadcast selectors "
                        + ", ".join(k for k, _ in sel)
                        + ", delivered masked per tile by DM (no compute mask)"
                    )
                    return tuple(sel)
        self.derived.append(
            "guard_mask=dm has no effect: the value is not old -/+ (column broadcast x row "
            "broadcast); the masked overlay stays on compute"
        )
        return ()

    def sender_side(self, e: CExpr, out: list[HaloConversion]) -> CExpr:
        """Replace each halo-tile x edge-operator term by the patch its owner sends."""
        halos = {o.name: o for o in self.operands.values() if o.role == "halo"}
        edges = {c.name for c in self.consts.values() if c.kind.endswith("shift_edge")}

        def conv(halo: str, edge: str, axis: str) -> CExpr:
            o = halos[halo]
            own = self.operands[(o.array, TileIndex("r"), TileIndex("c"))].name
            step = o.col.delta if axis == "x" else o.row.delta
            hc = HaloConversion(f"{halo}_patch", halo, own, edge, axis, step)
            if hc not in out:
                out.append(hc)
            return BlockRef(hc.patch)

        def walk(x: CExpr) -> CExpr:
            match x:
                case MatmulExpr(lhs=BlockRef(buffer=h), rhs=BlockRef(buffer=k)) if (
                    h in halos and k in edges
                ):
                    return conv(h, k, "x")
                case MatmulExpr(lhs=BlockRef(buffer=k), rhs=BlockRef(buffer=h)) if (
                    h in halos and k in edges
                ):
                    return conv(h, k, "y")
                case BinaryExpr(op=op, lhs=a, rhs=b):
                    return BinaryExpr(op, walk(a), walk(b))
            return x

        e = walk(e)
        if out:
            self.derived.append(
                "halo patches converted by their owners and sent: "
                + ", ".join(f"{c.patch} ({c.axis}{c.step:+d})" for c in out)
            )
        else:
            self.derived.append("halo_conversion=sender has no effect: no halo patches")
        return e

    def hoisted_division(self, a: Value, b: Value) -> CExpr:
        """a / b with b launch-invariant: the reciprocal of b once per core, then a
        multiplication per tile (the seed evaluates it at the pivot cell, on DM)."""
        den = self.value(b)
        invariant = {
            o.name for o in self.operands.values() if o.row.base is None and o.col.base is None
        }
        invariant |= {c.name for c in self.consts.values()}
        if not block_refs(den) <= invariant:
            raise AnnotationError(
                f"{self.plan.path}:{self.k.line}: tileflow.reciprocal=hoisted is illegal for "
                f"`{self.k.kernel}`: its divisor {b} varies with the output tile; keep "
                "reciprocal: compute."
            )
        name = f"recip{len(self.hoisted)}"
        self.hoisted[name] = UnaryExpr("recip", den)
        self.derived.append(f"reciprocal of {format_value(b)} hoisted out of the tile loop: {name}")
        return BinaryExpr("mul", self.value(a), BlockRef(name))

    # ----- reductions -------------------------------------------------------------------
    def contraction(self, v: Value) -> tuple[Contraction, Value]:
        rd = self.k.reduction
        assert rd is not None
        s = _find_sum(v)
        factors = _mul_factors(s.body)
        loads = [f for f in factors if isinstance(f, Load)]
        scale = 1.0
        for f in factors:
            if isinstance(f, Num):
                scale *= f.value
            elif isinstance(f, Param) and f.name in self.scalars:
                scale *= self.scalars[f.name]
            elif not isinstance(f, Load):
                raise self.bad(f"the reduction factor {f} is not a load or a constant")
        if len(loads) != 2:
            raise self.bad("a reduction body must multiply exactly two array elements")
        a, b = loads
        kv = Affine.var(rd.var)
        strip = rd.strip
        if a.row == Affine.var("i") and a.col == kv and b.col == kv and b.row == Affine.var("j"):
            transpose = True
            rhs = self.operand(b.array, TileIndex("c"), TileIndex("k"), "panel", 1, strip)
        elif a.row == Affine.var("i") and a.col == kv and b.row == kv and b.col == Affine.var("j"):
            transpose = False
            rhs = self.operand(b.array, TileIndex("k"), TileIndex("c"), "panel", strip, 1)
        else:
            raise self.bad(
                f"reduction operands [{a.row}][{a.col}] * [{b.row}][{b.col}] are not "
                "A[i][k]*B[j][k] or A[i][k]*B[k][j]"
            )
        lhs = self.operand(a.array, TileIndex("r"), TileIndex("k"), "panel", 1, strip)
        blocks = rd.extent // TILE // strip
        self.derived.append(
            f"reduction over {rd.extent // TILE} tiles in {blocks} deliveries "
            f"of {strip} tile(s) per operand"
        )
        return Contraction(lhs, rhs, transpose, scale, blocks), _replace_sum(v, Param("acc"))


def block_refs(e: CExpr) -> set[str]:
    """The buffers a compute expression reads."""
    match e:
        case BlockRef(buffer=b):
            return {b}
        case BinaryExpr(lhs=a, rhs=b) | MatmulExpr(lhs=a, rhs=b):
            return block_refs(a) | block_refs(b)
        case UnaryExpr(operand=a):
            return block_refs(a)
    return set()


def _slug(t: TileIndex) -> str:
    if t.base:
        return t.base + ("" if not t.delta else ("p" if t.delta > 0 else "m") + str(abs(t.delta)))
    assert t.elem is not None
    return "x" + "".join(ch for ch in str(t.elem) if ch.isalnum())


def _add_terms(v: Value) -> list[Value]:
    if isinstance(v, Bin) and v.op == "add":
        return _add_terms(v.lhs) + _add_terms(v.rhs)
    return [v]


def _mul_factors(v: Value) -> list[Value]:
    if isinstance(v, Bin) and v.op == "mul":
        return _mul_factors(v.lhs) + _mul_factors(v.rhs)
    return [v]


def _find_sum(v: Value) -> Sum:
    if isinstance(v, Sum):
        return v
    if isinstance(v, Bin):
        for x in (v.lhs, v.rhs):
            if _contains_sum(x):
                return _find_sum(x)
    raise TypeError(v)


def _contains_sum(v: Value) -> bool:
    return isinstance(v, Sum) or (
        isinstance(v, Bin) and (_contains_sum(v.lhs) or _contains_sum(v.rhs))
    )


def _replace_sum(v: Value, by: Value) -> Value:
    if isinstance(v, Sum):
        return by
    if isinstance(v, Bin):
        return Bin(v.op, _replace_sum(v.lhs, by), _replace_sum(v.rhs, by))
    return v


def cexpr_text(e: CExpr) -> str:
    """A compact one-line form of a compute expression (for the printed checkpoints)."""
    match e:
        case BlockRef(buffer=b):
            return b
        case FillExpr(value=v):
            return repr(v)
        case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t):
            return f"({cexpr_text(a)} @ {cexpr_text(b)}{'^T' if t else ''})"
        case BinaryExpr(op=op, lhs=a, rhs=b):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}.get(op, op)
            return f"({cexpr_text(a)} {sym} {cexpr_text(b)})"
        case UnaryExpr(op=op, operand=a):
            return f"{op}({cexpr_text(a)})"
    return repr(e)


def format_tileflow(tf: TileFlow) -> str:
    out = [f"tileflow @{tf.plan.name}"]
    for k in tf.kernels:
        out.append(f"  kernel {k.key} -> {k.tile.target}[r][c]")
        for o in k.operands:
            out.append(
                f"    operand {o.name}: {o.array}[{o.row}][{o.col}] "
                f"{o.rows}x{o.cols} tile(s), {o.role}"
            )
        for c in k.consts:
            out.append(f"    const {c.name}: {c.kind}({c.arg})")
        if k.contraction:
            cn = k.contraction
            out.append(
                f"    acc = sum over {cn.blocks} blocks: {cn.lhs.name} @ {cn.rhs.name}"
                f"{'^T' if cn.transpose else ''} (scale {cn.scale})"
            )
        out.extend(f"    once per core: {n} = {cexpr_text(e)}" for n, e in k.hoisted)
        out.append(f"    value = {cexpr_text(k.expr)}")
        out.append(f"    guard: masked overlay keeping {k.old} on inactive lanes")
        out.extend(f"    derived: {d}" for d in k.derived)
    return "\n".join(out) + "\n"
