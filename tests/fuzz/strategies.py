"""Hypothesis strategies that build `grammar.Program` values.

Each family draws the leaf kinds, masks and reductions its row of docs/helion-surface.md
allows (e.g. argmax reads a plain load, a leading-axis reduction recomputes loads and
elementwise ops only), so every drawn program is valid Helion and documented as
supported, except `Refused` programs, which Loom must refuse by name. Choices that
shrink well come first (a leaf before an operation, the smaller shape first), so a
failure shrinks toward the smallest program that still fails.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .grammar import (
    BINARY,
    COMPARE,
    REFUSED,
    UNARY,
    ArchChoice,
    Binary,
    Const,
    Expr,
    LeadingReduce,
    Leaf,
    LeafSpec,
    LoopReduce,
    Mask,
    Matmul,
    Output,
    Pointwise,
    Program,
    Reduce,
    Refused,
    Scalar,
    SliceReduce,
    Unary,
    Where,
    family_exprs,
    reads,
)

DIMS = (32, 64, 96, 128)  # small: a tt-lang-sim run grows with tiles x cores
FLOATS = ("fp32", "bf16", "fp16")
CONSTS = (2.0, 0.5, -1.0, 3.0, 1.0, -0.25)
FORMATS = ("", "bfp8", "bfp4", "x0=bfp8", "bf16,acc=fp32")
ARCH_GRIDS = {
    "wormhole_n150": (8, 8),
    "blackhole_p150": (10, 11),
    "blackhole_p150_13x10": (10, 13),
    "blackhole_12x10": (10, 12),
}  # (grid_y, grid_x) of each built-in description (tests/fuzz/test_fuzz.py checks them)


@st.composite
def arch_choices(draw: st.DrawFn) -> ArchChoice:
    base = draw(st.sampled_from(sorted(ARCH_GRIDS)))
    if not draw(st.booleans()):
        return ArchChoice(base)
    gy, gx = ARCH_GRIDS[base]
    return ArchChoice(
        base,
        grid_y=draw(st.integers(1, gy)),
        grid_x=draw(st.integers(1, gx)),
        l1_kib=draw(st.sampled_from((0, 256, 512))),
    )


@st.composite
def exprs(
    draw: st.DrawFn, leaves: tuple[int, ...], masks: tuple[str, ...], scalars: int, depth: int
) -> Expr:
    """An expression over the leaf indices `leaves`, at most `depth` operations deep."""
    kinds = ["leaf"] + (["unary", "binary", "const", "where", "mask"] if depth > 0 else [])
    if not masks and "mask" in kinds:
        kinds.remove("mask")
    kind = draw(st.sampled_from(kinds))
    sub = exprs(leaves, masks, scalars, depth - 1)
    if kind == "leaf":
        return Leaf(draw(st.sampled_from(leaves)))
    if kind == "unary":
        return Unary(draw(st.sampled_from(UNARY)), draw(sub))
    if kind == "binary":
        return Binary(draw(st.sampled_from(BINARY)), draw(sub), draw(sub))
    if kind == "const":
        rhs: Const | Scalar = Const(draw(st.sampled_from(CONSTS)))
        if scalars and draw(st.booleans()):
            rhs = Scalar(draw(st.integers(0, scalars - 1)))
        return Binary(draw(st.sampled_from(BINARY)), draw(sub), rhs)
    if kind == "where":
        cmp = draw(st.sampled_from(COMPARE))
        return Where(cmp, draw(sub), draw(sub), draw(sub), draw(sub))
    axis = draw(st.sampled_from(masks))
    return Mask(axis, draw(st.integers(1, 200)), draw(sub))


def _leaf_specs(draw: st.DrawFn, kinds: tuple[str, ...], count: int) -> tuple[LeafSpec, ...]:
    """`count` leaves; the first is always a tile (every kernel reads a full window)."""
    specs = []
    for i in range(count):
        kind = "tile" if i == 0 else draw(st.sampled_from(kinds))
        specs.append(LeafSpec(kind, draw(st.sampled_from(FLOATS)), draw(st.booleans())))
    return tuple(specs)


def _reduce(
    draw: st.DrawFn, ops: tuple[str, ...], expr: Expr, tile_leaves: tuple[int, ...]
) -> Reduce:
    op = draw(st.sampled_from(ops))
    if op in ("argmax", "argmin"):  # ties: an exact load, as the reference sees it
        return Reduce(op, Leaf(draw(st.sampled_from(tile_leaves))), draw(st.booleans()),
                      draw(st.sampled_from(("int64", "int32"))))  # fmt: skip
    return Reduce(op, expr, draw(st.booleans()), draw(st.sampled_from(("fp32", "bf16"))),
                  draw(st.sampled_from((1, 0))))  # fmt: skip


@st.composite
def programs(draw: st.DrawFn, depth: int = 3) -> Program:
    """Programs of the grammar (docs/fuzzing.md, "The generator")."""
    family_kind = draw(
        st.sampled_from(("pointwise", "slice", "loop", "leading", "matmul", "refused"))
    )
    m, n = draw(st.sampled_from(DIMS)), draw(st.sampled_from(DIMS))
    dims: tuple[int, ...] = (m, n)
    scalars = tuple(draw(st.lists(st.sampled_from((0.5, 1.5, -2.0)), max_size=2)))
    count = draw(st.integers(1, 3))
    expr_depth = draw(st.integers(0, depth))

    def expr(leaves: tuple[LeafSpec, ...], masks: tuple[str, ...], only: str = "") -> Expr:
        ids = tuple(i for i, s in enumerate(leaves) if not only or s.kind == only)
        return draw(exprs(ids, masks, len(scalars), expr_depth))

    def output(leaves: tuple[LeafSpec, ...], masks: tuple[str, ...]) -> Output:
        return Output(expr(leaves, masks), draw(st.sampled_from(FLOATS)))

    family: object
    if family_kind == "pointwise":
        rank = draw(st.sampled_from((2, 1, 3)))
        kinds = ("tile", "row", "col") if rank == 2 else ("tile",)
        masks = ("n", "m") if rank > 1 else ("n",)
        if rank == 3:
            dims = (draw(st.integers(1, 3)), m, n)
        leaves = _leaf_specs(draw, kinds, count)
        outs = tuple(output(leaves, masks) for _ in range(draw(st.integers(1, 2))))
        family = Pointwise(rank, outs)
    elif family_kind == "slice":
        axis = draw(st.sampled_from((-1, 0)))
        kinds, masks = (("tile", "col"), ("m",)) if axis == -1 else (("tile", "row"), ("n",))
        leaves = _leaf_specs(draw, kinds, count)
        tiles = tuple(i for i, s in enumerate(leaves) if s.kind == "tile")
        red = _reduce(draw, ("sum", "amax", "amin", "mean", "var", "argmax", "argmin"),
                      expr(leaves, masks), tiles)  # fmt: skip
        center = None
        if red.op not in ("argmax", "argmin") and draw(st.booleans()):
            center = output(leaves, masks)
        family = SliceReduce(axis, red, center)
    elif family_kind == "loop":
        leaves = _leaf_specs(draw, ("tile", "row", "col"), count)
        tiles = tuple(i for i, s in enumerate(leaves) if s.kind == "tile")
        red = _reduce(draw, ("sum", "amax", "amin", "mean", "argmax", "argmin"),
                      expr(leaves, ("n", "m")), tiles)  # fmt: skip
        family = LoopReduce(draw(st.sampled_from((-1, 0))), red)
    elif family_kind == "leading":
        dims = (draw(st.integers(1, 3)), m, n)
        leaves = _leaf_specs(draw, ("tile",), count)
        red = _reduce(draw, ("sum", "amax", "amin", "mean", "var"), expr(leaves, ()), ())
        family = LeadingReduce(red)
    elif family_kind == "matmul":
        leaves = (LeafSpec("acc", "fp32"), *_leaf_specs(draw, ("tile", "row", "col"), count))
        epi = expr(leaves, ("n", "m"))
        if not reads(epi, 0):
            epi = Binary(draw(st.sampled_from(("add", "mul", "maximum"))), Leaf(0), epi)
        k = draw(st.sampled_from((32, 64, 96, 128)))
        a_dtype, b_dtype = draw(st.sampled_from(FLOATS[:2])), draw(st.sampled_from(FLOATS[:2]))
        family = Matmul(k, a_dtype, b_dtype, Output(epi, draw(st.sampled_from(FLOATS))))
    else:
        construct = draw(st.sampled_from(REFUSED))
        leaves = (LeafSpec("tile", "fp32"),)
        if construct == "misaligned_shape":
            dims = (m, draw(st.sampled_from((40, 100, 72))))
        family = Refused(construct)
    assert isinstance(
        family, Pointwise | SliceReduce | LoopReduce | LeadingReduce | Matmul | Refused
    )
    formats = draw(st.sampled_from(FORMATS))
    if isinstance(family, Matmul) and formats.startswith("x0="):
        formats = "b=bfp8"  # leaf 0 of a matmul is its accumulator, not a tensor x0
    elif formats.startswith("x0=") and not any(reads(e, 0) for e in family_exprs(family)):
        formats = ""  # name a tensor the kernel reads
    return Program(
        dims=dims,
        leaves=leaves,
        scalars=scalars,
        family=family,
        formats=formats,
        arch=draw(arch_choices()),
        seed=draw(st.integers(0, 3)),
    )
