"""Checkpoint 1, TilePlan: the tiled iteration space of every kernel.

Each thread's write `X[row][col]` is re-indexed by the element it writes (i, j), so reads
and guards become affine in (i, j), the launch parameters (t) and reduction variables
(k). Guards must cut an axis-aligned rectangle; its tiles are the launch's tile range,
and predicate placement decides which tiles carry an element mask. Reductions are
strip-mined (and optionally interchanged) after a dependence check; fusion of a producer
kernel into its consumer is checked the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loom.cuda.annotations import Annotations
from loom.cuda.ir import (
    THREAD_X,
    THREAD_Y,
    Affine,
    ArrayDecl,
    Bin,
    Constraint,
    CudaProgram,
    Kernel,
    Launch,
    Load,
    Num,
    Param,
    Sum,
    TimeLoop,
    Update,
    Value,
)
from loom.errors import AnnotationError, CudaSubsetError

TILE = 32
I, J = "i", "j"  # noqa: E741  (the written element's row and column)


@dataclass(frozen=True, slots=True)
class Region:
    """max(lo) <= i < min(hi) (rows) and likewise for columns, in elements."""

    row_lo: tuple[Affine, ...]
    row_hi: tuple[Affine, ...]
    col_lo: tuple[Affine, ...]
    col_hi: tuple[Affine, ...]

    def at(self, env: Mapping[str, int]) -> tuple[int, int, int, int]:
        return (
            max(a.eval(env) for a in self.row_lo),
            min(a.eval(env) for a in self.row_hi),
            max(a.eval(env) for a in self.col_lo),
            min(a.eval(env) for a in self.col_hi),
        )


@dataclass(frozen=True, slots=True)
class Reduction:
    var: str
    extent: int
    strip: int
    """Reduction tiles per delivery."""
    interchange: bool


@dataclass(frozen=True, slots=True)
class TileKernel:
    key: str
    """Kernel name, plus its array bindings when launched with several."""
    kernel: str
    target: str
    value: Value
    """Loads indexed in (i, j, k, launch parameters), host array names."""
    region: Region
    scalars: tuple[str, ...]
    reduction: Reduction | None
    line: int
    fused: str | None = None
    """The producer kernel whose value replaced this kernel's reads of its target."""
    forwarded: tuple[Load, ...] = ()
    """Column reads `target[i][t + e]` of elements this launch overwrites, legal only when
    the owner of the tile holding column t + e reads it before writing it and forwards
    it along its core row (lowering realizes them as owner-sent row multicasts)."""


@dataclass(frozen=True, slots=True)
class Step:
    kernel: str
    """TileKernel key."""
    args: tuple[tuple[str, float | Affine], ...]
    """Scalar parameter values, affine in the host loop variable."""


@dataclass(frozen=True, slots=True)
class Phase:
    var: str | None
    lo: int
    hi: int
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class TilePlan:
    name: str
    path: str
    arrays: tuple[ArrayDecl, ...]
    kernels: tuple[TileKernel, ...]
    phases: tuple[Phase, ...]
    predicates: str
    notes: tuple[str, ...]

    def kernel(self, key: str) -> TileKernel:
        return next(k for k in self.kernels if k.key == key)

    def array(self, name: str) -> ArrayDecl:
        return next(a for a in self.arrays if a.name == name)

    def launches(self) -> tuple[tuple[Step, dict[str, int]], ...]:
        out: list[tuple[Step, dict[str, int]]] = []
        for ph in self.phases:
            for v in range(ph.lo, ph.hi) if ph.var else (0,):
                env = {ph.var: v} if ph.var else {}
                out.extend((s, env) for s in ph.steps)
        return tuple(out)


def build_tileplan(prog: CudaProgram, ann: Annotations) -> TilePlan:
    """CudaProgram -> TilePlan under the `tileplan` annotations."""
    pol = ann.tileplan
    kernels: dict[str, TileKernel] = {}
    phases: list[Phase] = []
    for item in prog.body:
        launches = item.launches if isinstance(item, TimeLoop) else (item,)
        steps = tuple(_step(prog, la, kernels, pol.strip_mine, pol.interchange) for la in launches)
        if isinstance(item, TimeLoop):
            phases.append(Phase(item.var, item.lo, item.hi, steps))
        else:
            phases.append(Phase(None, 0, 1, steps))
    fused: list[str] = []
    if pol.fuse:
        phases = _fuse(prog.path, kernels, phases, pol.fuse, fused)
    notes = [
        f"host loop {ph.var} in [{ph.lo}, {ph.hi}) -> temporal loop of "
        f"{len(ph.steps)} launch(es) per step, a grid barrier between launches"
        for ph in phases
        if ph.var
    ] + fused
    if pol.strip_mine != 1 and not any(k.reduction for k in kernels.values()):
        raise AnnotationError(
            f"tileplan.strip_mine={pol.strip_mine} needs a reduction loop, and {prog.path} "
            "has none; drop the annotation."
        )
    if pol.interchange and not any(k.reduction for k in kernels.values()):
        raise AnnotationError(
            f"tileplan.interchange needs a reduction loop, and {prog.path} has none; drop it."
        )
    name = prog.host
    return TilePlan(
        name,
        prog.path,
        prog.arrays,
        tuple(kernels.values()),
        tuple(phases),
        pol.predicates,
        tuple(notes),
    )


def _step(
    prog: CudaProgram, la: Launch, kernels: dict[str, TileKernel], strip: int, interchange: bool
) -> Step:
    k = prog.kernel(la.kernel)
    bind = dict(zip(k.params, la.args, strict=True))
    arrays = {p: str(bind[p]) for p in k.arrays}
    key = (
        k.name
        if all(p == a for p, a in arrays.items())
        else (k.name + "[" + ",".join(arrays[p] for p in k.arrays) + "]")
    )
    if key not in kernels:
        kernels[key] = _tile_kernel(prog, k, key, arrays, la, strip, interchange)
    args = tuple((p, bind[p]) for p in k.scalars)
    return Step(key, args)  # type: ignore[arg-type]


def delinearize(flat: Affine, cols: int) -> tuple[Affine, Affine]:
    """Split a linearised index into (row, col) for rows of `cols` elements: each
    coefficient and the constant are split as q*cols + r with |r| <= cols/2."""
    row, col = Affine(), Affine()
    for name, c in (*flat.terms, ("", flat.const)):
        q = (c + cols // 2) // cols
        r = c - q * cols
        if name:
            row = row + Affine(((name, q),)) if q else row
            col = col + Affine(((name, r),)) if r else col
        else:
            row, col = row + Affine.num(q), col + Affine.num(r)
    return row, col


def _tile_kernel(
    prog: CudaProgram,
    k: Kernel,
    key: str,
    arrays: dict[str, str],
    la: Launch,
    strip: int,
    interchange: bool,
) -> TileKernel:
    if len(k.updates) != 1:
        raise CudaSubsetError(
            f"{prog.path}:{k.line}: kernel `{k.name}` writes {len(k.updates)} distinct elements "
            "per thread; the subset allows one written element per thread."
        )
    u = k.updates[0]
    target = arrays[u.array]
    decl = prog.array(target)
    row_w, col_w = delinearize(u.col, decl.cols)
    if (
        row_w.coef(THREAD_Y) != 1
        or row_w.coef(THREAD_X)
        or col_w.coef(THREAD_X) != 1
        or (col_w.coef(THREAD_Y))
    ):
        raise CudaSubsetError(
            f"{prog.path}:{u.line}: the written element [{row_w}][{col_w}] is not "
            "(thread.y + offset, thread.x + offset); each thread must write the element at "
            "its own (row, column) shifted by launch parameters."
        )
    # thread.y = i - a, thread.x = j - b
    subs = {
        THREAD_Y: Affine.var(I) - row_w.without(THREAD_Y),
        THREAD_X: Affine.var(J) - col_w.without(THREAD_X),
    }
    value = _reindex(prog, u, u.value, arrays, subs)
    extent = {THREAD_Y: la.grid[0] * TILE, THREAD_X: la.grid[1] * TILE}
    guard = list(u.guard)
    for v, n in extent.items():
        guard.append(Constraint(Affine.var(v), "ge"))
        guard.append(Constraint(Affine.num(n - 1) - Affine.var(v), "ge"))
    region = _region(prog, u, tuple(Constraint(g.expr.subs(subs), g.op) for g in guard), decl)
    reduction = None
    sums = _sums(value)
    if sums:
        if len(sums) > 1:
            raise CudaSubsetError(f"{prog.path}:{u.line}: only one reduction loop per kernel.")
        s = sums[0]
        if _reads(s.body, target) and interchange:
            raise AnnotationError(
                f"tileplan.interchange is illegal for `{k.name}`: its reduction reads the "
                f"array it writes ({target}), a loop-carried dependence across output tiles."
            )
        tiles = s.extent // TILE
        if s.extent % TILE or strip < 1 or tiles % strip:
            raise AnnotationError(
                f"tileplan.strip_mine={strip} does not divide the {tiles} reduction tiles of "
                f"`{k.name}` (extent {s.extent}); pick a divisor of {tiles}."
            )
        reduction = Reduction(s.var, s.extent, strip, interchange)
    return TileKernel(key, k.name, target, value, region, k.scalars, reduction, u.line)


def _reindex(
    prog: CudaProgram, u: Update, v: Value, arrays: dict[str, str], subs: dict[str, Affine]
) -> Value:
    match v:
        case Load(array=a, col=flat):
            host = arrays[a]
            row, col = delinearize(flat.subs(subs), prog.array(host).cols)
            return Load(host, row, col)
        case Bin(op=op, lhs=lhs, rhs=rhs):
            return Bin(
                op, _reindex(prog, u, lhs, arrays, subs), _reindex(prog, u, rhs, arrays, subs)
            )
        case Sum(var=var, extent=n, body=b):
            return Sum(var, n, _reindex(prog, u, b, arrays, subs))
        case Num() | Param():
            return v
    raise TypeError(v)


def _region(prog: CudaProgram, u: Update, guard: tuple[Constraint, ...], decl: ArrayDecl) -> Region:
    bounds: dict[str, tuple[list[Affine], list[Affine]]] = {I: ([], []), J: ([], [])}
    for g in guard:
        axes = [a for a in (I, J) if g.expr.coef(a)]
        if len(axes) != 1 or abs(g.expr.coef(axes[0])) != 1:
            raise CudaSubsetError(
                f"{prog.path}:{u.line}: guard `{g}` (in the written element's row i and column "
                "j) is not an axis-aligned bound; guards must bound i or j alone, with unit "
                "coefficient (a rectangle of the output)."
            )
        a = axes[0]
        c = g.expr.coef(a)
        rest = g.expr.without(a)
        lo, hi = bounds[a]
        # c*a + rest >= 0  ->  a >= -rest (c = 1) or a <= rest (c = -1)
        if g.op == "eq":
            lo.append(rest.scale(-c))
            hi.append(rest.scale(-c) + Affine.num(1))
        elif c == 1:
            lo.append(rest.scale(-1))
        else:
            hi.append(rest + Affine.num(1))
    (rl, rh), (cl, ch) = bounds[I], bounds[J]
    rl.append(Affine.num(0))
    cl.append(Affine.num(0))
    rh.append(Affine.num(decl.rows))
    ch.append(Affine.num(decl.cols))
    return Region(tuple(rl), tuple(rh), tuple(cl), tuple(ch))


def _sums(v: Value) -> list[Sum]:
    match v:
        case Sum():
            return [v]
        case Bin(lhs=a, rhs=b):
            return _sums(a) + _sums(b)
    return []


def _reads(v: Value, array: str) -> bool:
    match v:
        case Load(array=a):
            return a == array
        case Bin(lhs=a, rhs=b):
            return _reads(a, array) or _reads(b, array)
        case Sum(body=b):
            return _reads(b, array)
    return False


def loads(v: Value) -> list[Load]:
    match v:
        case Load():
            return [v]
        case Bin(lhs=a, rhs=b):
            return loads(a) + loads(b)
        case Sum(body=b):
            return loads(b)
    return []


def _fuse(
    path: str,
    kernels: dict[str, TileKernel],
    phases: list[Phase],
    fuse: tuple[str, ...],
    notes: list[str],
) -> list[Phase]:
    """Fusing producer P into consumer C replaces C's reads of P's target by P's value
    and drops P's launches (P's target is then never stored). A launch has no barrier
    between tiles, so every element P's value reads that C overwrites in the same launch
    must be read by its owner before the write and forwarded: realizable for a column
    read X[i][t + e] whose column is the first one C writes (its tile is owned by the
    first core of each core row, which multicasts it along the row). Any other overlap
    is illegal."""
    names = {k.kernel: k for k in kernels.values()}
    missing = [f for f in fuse if f not in names]
    if len(fuse) != 2 or missing:
        raise AnnotationError(
            f"tileplan.fuse must name two launched kernels (producer, consumer); got {list(fuse)}"
            f"{'; unknown: ' + ', '.join(missing) if missing else ''}."
        )
    p, c = names[fuse[0]], names[fuse[1]]
    if not _reads(c.value, p.target):
        raise AnnotationError(
            f"tileplan.fuse: `{c.kernel}` does not read `{p.target}`, which `{p.kernel}` "
            "writes; there is nothing to fuse."
        )
    envs = _fused_envs(path, phases, p, c)
    forwarded: list[Load] = []
    reads = [ld for ld in loads(c.value) if ld.array == p.target]
    for ld in reads:
        for f in loads(_at(p.value, {I: ld.row, J: ld.col})):
            own = f.row == Affine.var(I) and f.col == Affine.var(J)
            if f.array != c.target or own or f in forwarded or not _overwritten(f, c, envs):
                continue  # an element's own value is read by its writer before the write
            if (
                f.row == Affine.var(I)
                and not f.col.names & {I, J}
                and all(c.region.at(e)[2] == f.col.eval(e) for e in envs)
            ):
                forwarded.append(f)
                continue
            raise AnnotationError(
                f"{path}:{p.line}: tileplan.fuse of `{p.kernel}` into `{c.kernel}` is "
                f"illegal: the fused value reads {f.array}[{f.row}][{f.col}], which "
                f"`{c.kernel}` overwrites in the same launch (its guard includes those "
                "elements), and a launch has no barrier between tiles, so another core could "
                "overwrite the element before it is read; only a column read of the first "
                "column the consumer writes can be forwarded by its owner. Keep the kernels "
                "separate."
            )
    for ld in reads:
        if not (ld.row == Affine.var(I) and not ld.col.names & {I, J}) or not _covers(
            p, ld, c, envs
        ):
            raise AnnotationError(
                f"{path}:{c.line}: tileplan.fuse of `{p.kernel}` into `{c.kernel}`: "
                f"`{c.kernel}` reads {ld.array}[{ld.row}][{ld.col}], which is not a column "
                f"read of elements `{p.kernel}` writes at every launch; Loom fuses only "
                "X[i][t + e] reads inside the producer's guard. Keep the kernels separate."
            )
    value = _substitute(c.value, p)
    fused = TileKernel(
        c.key,
        c.kernel,
        c.target,
        value,
        c.region,
        c.scalars,
        c.reduction,
        c.line,
        p.kernel,
        tuple(forwarded),
    )
    del kernels[p.key]
    kernels[c.key] = fused
    notes.append(
        f"{p.kernel} fused into {c.kernel}: {p.target} is not stored"
        + (
            "; "
            + ", ".join(f"{ld.array}[{ld.row}][{ld.col}]" for ld in forwarded)
            + " read by the owner of its tile before the update and forwarded along its "
            "core row"
            if forwarded
            else ""
        )
    )
    return [
        Phase(ph.var, ph.lo, ph.hi, tuple(s for s in ph.steps if s.kernel != p.key))
        for ph in phases
    ]


def _fused_envs(
    path: str, phases: list[Phase], p: TileKernel, c: TileKernel
) -> list[dict[str, int]]:
    """The host environments of the consumer's launches; the producer must launch with
    the same scalar arguments right before the consumer in every step."""
    envs: list[dict[str, int]] = []
    for ph in phases:
        keys = [s.kernel for s in ph.steps]
        for n, s in enumerate(ph.steps):
            if s.kernel != c.key:
                continue
            prev = ph.steps[n - 1] if n else None
            if prev is None or prev.kernel != p.key or dict(prev.args) != dict(s.args):
                raise AnnotationError(
                    f"{path}:{c.line}: tileplan.fuse needs `{p.kernel}` launched right before "
                    f"`{c.kernel}` with the same scalar arguments (launches: {keys})."
                )
            envs.extend(
                {ph.var: v} if ph.var else {} for v in (range(ph.lo, ph.hi) if ph.var else (0,))
            )
    return envs


def _overwritten(ld: Load, c: TileKernel, envs: list[dict[str, int]]) -> bool:
    """Whether some element `ld` reads lies in the consumer's written rectangle."""
    for e in envs:
        r0, r1, c0, c1 = c.region.at(e)
        if r0 >= r1 or c0 >= c1:
            continue
        rows = (r0, r1) if I in ld.row.names or J in ld.row.names else (ld.row.eval(e),) * 2
        cols = (c0, c1) if I in ld.col.names or J in ld.col.names else (ld.col.eval(e),) * 2
        if rows[0] == rows[1] and not r0 <= rows[0] < r1:
            continue
        if cols[0] == cols[1] and not c0 <= cols[0] < c1:
            continue
        return True
    return False


def _covers(p: TileKernel, ld: Load, c: TileKernel, envs: list[dict[str, int]]) -> bool:
    """The producer writes column ld.col of every row the consumer writes."""
    for e in envs:
        r0, r1, c0, c1 = c.region.at(e)
        if r0 >= r1 or c0 >= c1:
            continue
        pr0, pr1, pc0, pc1 = p.region.at(e)
        if not (pr0 <= r0 and r1 <= pr1 and pc0 <= ld.col.eval(e) < pc1):
            return False
    return True


def _substitute(v: Value, p: TileKernel) -> Value:
    """v with each read p.target[row][col] replaced by p's value at (i, j) = (row, col)."""
    match v:
        case Load(array=a, row=r, col=c) if a == p.target:
            return _at(p.value, {I: r, J: c})
        case Bin(op=op, lhs=x, rhs=y):
            return Bin(op, _substitute(x, p), _substitute(y, p))
        case Sum(var=var, extent=n, body=b):
            return Sum(var, n, _substitute(b, p))
    return v


def _at(v: Value, subs: Mapping[str, Affine]) -> Value:
    match v:
        case Load(array=a, row=r, col=c):
            return Load(a, r.subs(subs), c.subs(subs))
        case Bin(op=op, lhs=x, rhs=y):
            return Bin(op, _at(x, subs), _at(y, subs))
        case Sum(var=var, extent=n, body=b):
            return Sum(var, n, _at(b, subs))
    return v


def format_tileplan(tp: TilePlan) -> str:
    out = [f"tileplan @{tp.name}  // {tp.path}, predicates={tp.predicates}"]
    for a in tp.arrays:
        out.append(f"  array {a.name}[{a.rows}][{a.cols}]  tiles {a.rows // TILE}x{a.cols // TILE}")
    for k in tp.kernels:
        r = k.region
        rows = f"{_bound(r.row_lo, max)} <= i < {_bound(r.row_hi, min)}"
        cols = f"{_bound(r.col_lo, max)} <= j < {_bound(r.col_hi, min)}"
        out.append(f"  kernel {k.key}  (line {k.line})")
        out.append(f"    {k.target}[i][j] = {format_value(k.value)}")
        out.append(f"    where {rows}, {cols}")
        if k.reduction:
            rd = k.reduction
            out.append(
                f"    reduction {rd.var} in [0, {rd.extent}): strip {rd.strip} tiles per "
                f"delivery, {'block loop outermost' if rd.interchange else 'innermost'}"
            )
    for ph in tp.phases:
        head = f"for {ph.var} in [{ph.lo}, {ph.hi})" if ph.var else "once"
        steps = "; ".join(
            s.kernel + "(" + ", ".join(f"{n}={v}" for n, v in s.args) + ")" for s in ph.steps
        )
        out.append(f"  {head}: {steps}")
    out.extend(f"  // {n}" for n in tp.notes)
    return "\n".join(out) + "\n"


def _bound(forms: tuple[Affine, ...], pick: object) -> str:
    """max(...)/min(...) of bounds, constants folded into one."""
    consts = [a.const for a in forms if a.is_const]
    rest = list(dict.fromkeys(str(a) for a in forms if not a.is_const))
    if consts:
        rest.append(str(pick(consts)))  # type: ignore[operator]
    name = "max" if pick is max else "min"
    return rest[0] if len(rest) == 1 else f"{name}({', '.join(rest)})"


def format_value(v: Value) -> str:
    match v:
        case Load(array=a, row=r, col=c):
            return f"{a}[{r}][{c}]"
        case Num(value=x):
            return repr(x)
        case Param(name=n):
            return n
        case Bin(op=op, lhs=a, rhs=b):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
            return f"({format_value(a)} {sym} {format_value(b)})"
        case Sum(var=var, extent=n, body=b):
            return f"sum({var} < {n}: {format_value(b)})"
    raise TypeError(v)
