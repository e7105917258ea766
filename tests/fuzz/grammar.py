"""The typed grammar of fuzzed Helion programs.

A program is a value of these frozen dataclasses, never text: hypothesis builds and shrinks
values (`strategies.py`), `render.py` turns a value into a Helion file, so every generated
program is well formed by construction and a failure shrinks to a smaller *program*
rather than to a smaller string. The grammar follows docs/helion-surface.md: each family
below is one row (or a few rows) of its "Supported" table, and `Refused` holds constructs
of its "Not supported" table, which Loom must refuse by name.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- expressions: values of a family's working window ---------------------------------------

UNARY = (
    "exp", "exp2", "log", "sqrt", "rsqrt", "reciprocal", "abs", "neg", "relu", "sigmoid",
    "tanh", "silu", "gelu", "gelu_tanh", "square", "pow2", "pow3", "pow_half", "pow_neg1",
    "clamp", "clamp_min", "clamp_max", "float",
)  # fmt: skip
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
COMPARE = ("gt", "lt", "ge", "le")


@dataclass(frozen=True)
class Leaf:
    """A tensor read: `Program.leaves[index]`, rendered in the family's window."""

    index: int


@dataclass(frozen=True)
class Const:
    """A literal, only ever the right operand of a `Binary` (so every expression reads a
    tensor)."""

    value: float


@dataclass(frozen=True)
class Scalar:
    """A `float` argument of the kernel (`Program.scalars[index]`), as a right operand."""

    index: int


@dataclass(frozen=True)
class Unary:
    op: str
    arg: Expr


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: Expr
    rhs: Expr | Const | Scalar


@dataclass(frozen=True)
class Where:
    """`torch.where(lhs <cmp> rhs, then, other)`."""

    cmp: str
    lhs: Expr
    rhs: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True)
class Mask:
    """`torch.where(<tile>.index < limit, arg, 0.0)`; `axis` "n" indexes the last dim (a
    row, broadcast down the rows), "m" the rows (`tile_m.index[:, None]`)."""

    axis: str
    limit: int
    arg: Expr


Expr = Leaf | Unary | Binary | Where | Mask


# --- tensors -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LeafSpec:
    """What a leaf reads: `kind` "tile" (a tensor of the window's shape), "row" (a 1-D
    vector along the last dim, broadcast down the rows), "col" (a 1-D vector along the
    rows, broadcast across) or "acc" (a matmul's accumulator); `dtype` of the argument;
    `upcast` renders `.float()` on the load."""

    kind: str
    dtype: str
    upcast: bool = False


# --- families: the loop structure around the expressions -----------------------------------


@dataclass(frozen=True)
class Output:
    expr: Expr
    dtype: str


@dataclass(frozen=True)
class Pointwise:
    """`hl.tile` over 1, 2 or 3 axes (the batch axis with block size 1), one or two
    outputs of the window's shape."""

    rank: int
    outputs: tuple[Output, ...]


REDUCTIONS = ("sum", "amax", "amin", "mean", "var", "argmax", "argmin")


@dataclass(frozen=True)
class Reduce:
    """A reduction of an expression; `correction` is var's; `dtype` of the stored result
    (int64/int32 for argmax/argmin, else fp32 or bf16)."""

    op: str
    expr: Expr
    keepdim: bool
    dtype: str
    correction: int = 1


@dataclass(frozen=True)
class SliceReduce:
    """A full slice reduced in one go: `axis` -1 (grid over rows, `x[tile_m, :]`) or 0
    (grid over columns, `x[:, tile_n]`); `center` is a second output of the window's
    shape, `center - result` broadcast back."""

    axis: int
    reduce: Reduce
    center: Output | None = None


@dataclass(frozen=True)
class LoopReduce:
    """An inner `hl.tile` loop over the reduced dim (`axis` -1 or 0) carrying an
    accumulator (sum/mean/amax/amin) or a (value, index) pair (argmax/argmin)."""

    axis: int
    reduce: Reduce


@dataclass(frozen=True)
class LeadingReduce:
    """A reduction over dim 0 of a 3-D tensor read as `x[:, tile_m, tile_n]`."""

    reduce: Reduce


@dataclass(frozen=True)
class Matmul:
    """`acc + a[tile_m, tile_k] @ b[tile_k, tile_n]` over an inner loop, then an epilogue
    (leaf kind "acc" is the accumulator)."""

    k: int
    a_dtype: str
    b_dtype: str
    epilogue: Output


REFUSED = ("cumsum", "erf", "pow_other", "argmax_grid_tiled", "misaligned_shape")


@dataclass(frozen=True)
class Refused:
    """A construct docs/helion-surface.md lists as not supported, in an otherwise plain
    2-D pointwise kernel (`construct` one of REFUSED)."""

    construct: str


Family = Pointwise | SliceReduce | LoopReduce | LeadingReduce | Matmul | Refused


# --- architecture ------------------------------------------------------------------------


@dataclass(frozen=True)
class ArchChoice:
    """A built-in description, or a variant of it with a smaller core grid and less usable
    L1 (0: the base's own)."""

    base: str
    grid_y: int = 0
    grid_x: int = 0
    l1_kib: int = 0


# --- the program -------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """One fuzzed kernel: its dims (M, N; B first for 3-D windows), the tensors its leaves
    read, its float arguments, its loop family, the `--dtype` formats and the target."""

    dims: tuple[int, ...]
    leaves: tuple[LeafSpec, ...]
    scalars: tuple[float, ...]
    family: Family
    formats: str
    arch: ArchChoice
    seed: int = 0


_SPANS = {"tile": "mn", "acc": "mn", "row": "n", "col": "m"}


def spans(e: Expr, leaves: tuple[LeafSpec, ...]) -> frozenset[str]:
    """The window axes ("m" rows, "n" columns) an expression's value extends over (its
    leaves' and its masks', by broadcasting); a value missing one has extent 1 there (a
    broadcast row or column)."""
    axes: set[str] = set()
    for node in subexprs(e):
        if isinstance(node, Leaf):
            axes.update(_SPANS[leaves[node.index].kind])
        elif isinstance(node, Mask):
            axes.add(node.axis)
    return frozenset(axes)


def family_exprs(family: Family) -> list[Expr]:
    """The expressions a family computes (its outputs, reduced values, epilogue)."""
    match family:
        case Pointwise(outputs=outs):
            return [o.expr for o in outs]
        case SliceReduce(reduce=r, center=c):
            return [r.expr] + ([c.expr] if c is not None else [])
        case LoopReduce(reduce=r) | LeadingReduce(reduce=r):
            return [r.expr]
        case Matmul(epilogue=o):
            return [o.expr]
        case Refused():
            return [Leaf(0)]
    raise TypeError(family)


def reads(e: Expr, index: int) -> bool:
    """Whether `e` reads leaf `index`."""
    return any(isinstance(node, Leaf) and node.index == index for node in subexprs(e))


def subexprs(e: Expr) -> list[Expr]:
    """`e` and every expression inside it, pre-order."""
    match e:
        case Unary(arg=a) | Mask(arg=a):
            return [e, *subexprs(a)]
        case Binary(lhs=lhs, rhs=rhs):
            right = [] if isinstance(rhs, Const | Scalar) else subexprs(rhs)
            return [e, *subexprs(lhs), *right]
        case Where(lhs=a, rhs=b, then=c, other=d):
            return [e, *(x for part in (a, b, c, d) for x in subexprs(part))]
    return [e]
