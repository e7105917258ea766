"""TileProgram: the symbolic, dataflow-agnostic block program (paper §2.1, stage 00).

A TileProgram keeps what the Helion source says and nothing more: the kernel's tensor
arguments, the grid (one tile symbol and one tile index per axis), and the block body as
a list of operations on tile values. Loads and stores are affine windows whose offsets
and sizes are expressions of tile indices and tile symbols. Nothing here decides where a
value lives or which core runs a block.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from loom.symbolic import Cond, Expr, Sym, ceildiv

DTYPES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp32": 4, "bfp8": 1, "int32": 4}
"""Element dtypes and their nominal bytes per element (tile bytes come from the arch)."""


@dataclass(frozen=True)
class TensorArg:
    """A kernel argument (or a kernel-allocated output) living in DRAM."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    role: str  # "input" | "output"


@dataclass(frozen=True)
class Value:
    """An SSA tile value of the block program; `shape` is symbolic."""

    name: str
    shape: tuple[Expr, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Window:
    """One dimension of an access: elements [offset, offset + size)."""

    offset: Expr
    size: Expr


@dataclass(frozen=True)
class Op:
    """Base class of block-program operations. `line` is the Helion source line."""

    def operands(self) -> tuple[Value, ...]:
        return ()

    def results(self) -> tuple[Value, ...]:
        return ()


@dataclass(frozen=True)
class Load(Op):
    result: Value
    tensor: str
    window: tuple[Window, ...]
    line: int = 0

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


@dataclass(frozen=True)
class Store(Op):
    tensor: str
    window: tuple[Window, ...]
    value: Value
    line: int = 0

    def operands(self) -> tuple[Value, ...]:
        return (self.value,)


@dataclass(frozen=True)
class Full(Op):
    """A tile filled with one constant (`hl.zeros`, `hl.full`, `torch.full_like`)."""

    result: Value
    fill: float
    line: int = 0

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


@dataclass(frozen=True)
class Matmul(Op):
    """result = acc + lhs @ rhs over the last two dims (batched when rank 3).

    Covers `torch.addmm`, `torch.baddbmm`, `torch.bmm`, `torch.mm`, `@` and `hl.dot`.
    `rhs_transposed` records a `k.transpose(-1, -2)` folded into the matmul, and
    `lhs_transposed` an `x.T` on the left (`x[tile_m, tile_n].T @ g`, a weight gradient).
    """

    result: Value
    lhs: Value
    rhs: Value
    acc: Value | None = None
    rhs_transposed: bool = False
    line: int = 0
    lhs_transposed: bool = False

    def operands(self) -> tuple[Value, ...]:
        return (self.lhs, self.rhs) + ((self.acc,) if self.acc is not None else ())

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


ELEMENTWISE_OPS = {
    "add": 2,
    "sub": 2,
    "mul": 2,
    "div": 2,
    "maximum": 2,
    "minimum": 2,
    "exp": 1,
    "exp2": 1,
    "log": 1,
    "recip": 1,
    "neg": 1,
    "sqrt": 1,
    "rsqrt": 1,
    "sigmoid": 1,
    "tanh": 1,
    "relu": 1,
    "abs": 1,
    "silu": 1,
    "gelu": 1,
    "gt": 2,
    "lt": 2,
}
"""Op name -> arity. `gt`/`lt` give 1.0 where the comparison holds and 0.0 elsewhere;
`gelu` is the erf form (the tanh form is decomposed by the frontend)."""


@dataclass(frozen=True)
class Elementwise(Op):
    """Numpy-broadcasting elementwise op; a float operand is a scalar constant."""

    result: Value
    op: str
    args: tuple[Value | float, ...]
    line: int = 0

    def operands(self) -> tuple[Value, ...]:
        return tuple(a for a in self.args if isinstance(a, Value))

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


@dataclass(frozen=True)
class Reduce(Op):
    """Reduction (`max` or `sum`) over one axis, dropping it (keepdim=False)."""

    result: Value
    op: str
    operand: Value
    axis: int
    line: int = 0

    def operands(self) -> tuple[Value, ...]:
        return (self.operand,)

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


REDUCE_COMBINE = {"sum": "add", "max": "maximum"}
"""The elementwise op folding a reduction's partial result into a running one (a loop
that reduces a dim chunk by chunk)."""


def reduce_identity(op: str, dtype: str) -> float:
    """The fill a running reduction starts from: 0 for a sum, the lowest value for a max
    (int32's least, -inf otherwise)."""
    if op == "sum":
        return 0.0
    return -(2.0**31) if dtype == "int32" else float("-inf")


@dataclass(frozen=True)
class ExpandDims(Op):
    """Insert a size-1 axis (`x[:, None]`) so a later elementwise op broadcasts."""

    result: Value
    operand: Value
    axis: int
    line: int = 0

    def operands(self) -> tuple[Value, ...]:
        return (self.operand,)

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


@dataclass(frozen=True)
class Convert(Op):
    result: Value
    operand: Value
    line: int = 0

    def operands(self) -> tuple[Value, ...]:
        return (self.operand,)

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


@dataclass(frozen=True)
class Gather(Op):
    """Collect `operand` from every block along grid axis `across` (split reductions).

    The result has one leading row per block of that axis; only the block with tile
    index 0 along `across` may read it (the source guards its use with `if ... == 0`).
    """

    result: Value
    operand: Value
    across: str  # tile symbol name of the grid axis
    line: int = 0

    def operands(self) -> tuple[Value, ...]:
        return (self.operand,)

    def results(self) -> tuple[Value, ...]:
        return (self.result,)


@dataclass(frozen=True)
class Carried:
    """A loop-carried value: `init` enters, `arg` is visible in the body, `next` is
    yielded at the end of each iteration and `result` is the value after the loop."""

    init: Value
    arg: Value
    next: Value
    result: Value


@dataclass(frozen=True)
class ForLoop(Op):
    """Sequential loop over tiles of one dimension (an inner `hl.tile`).

    Iteration `index` covers elements [begin + index*tile, begin + (index+1)*tile) up to
    `end`, so the trip count is ceildiv(end - begin, tile).
    """

    tile: Sym
    index: Sym
    begin: Expr
    end: Expr
    body: tuple[Op, ...]
    carried: tuple[Carried, ...] = ()
    line: int = 0

    @property
    def trip_count(self) -> Expr:
        return ceildiv(self.end - self.begin, self.tile)

    def operands(self) -> tuple[Value, ...]:
        return tuple(c.init for c in self.carried)

    def results(self) -> tuple[Value, ...]:
        return tuple(c.result for c in self.carried)


@dataclass(frozen=True)
class If(Op):
    """Guarded region, e.g. `if tile_s.id == 0:` around a split-reduction merge."""

    cond: Cond
    body: tuple[Op, ...]
    line: int = 0


@dataclass(frozen=True)
class GridAxis:
    """One axis of the `hl.tile([...])` grid: tile symbol, tile index and extent."""

    tile: Sym
    index: Sym
    extent: int

    @property
    def num_tiles(self) -> Expr:
        return ceildiv(self.extent, self.tile)


@dataclass(frozen=True)
class TileProgram:
    name: str
    args: tuple[TensorArg, ...]
    grid: tuple[GridAxis, ...]
    body: tuple[Op, ...]
    source_file: str = ""
    notes: tuple[str, ...] = field(default=())
    after: TileProgram | None = None
    """The launch that runs after this one behind a grid-wide barrier (a later
    `hl.barrier` phase reading tiles other blocks wrote): its inputs include what this
    launch stored in DRAM."""

    def launches(self) -> tuple[TileProgram, ...]:
        """This launch and every one after it, in order."""
        return (self, *(self.after.launches() if self.after is not None else ()))

    def arg(self, name: str) -> TensorArg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)

    def grid_axis(self, tile_name: str) -> GridAxis:
        for axis in self.grid:
            if axis.tile.name == tile_name:
                return axis
        raise KeyError(tile_name)

    @property
    def tile_syms(self) -> tuple[Sym, ...]:
        """Every tile symbol, grid axes first, in order of first appearance."""
        seen: dict[str, Sym] = {a.tile.name: a.tile for a in self.grid}
        for op in walk(self.body):
            if isinstance(op, ForLoop):
                seen.setdefault(op.tile.name, op.tile)
        return tuple(seen.values())


def walk(ops: tuple[Op, ...]) -> Iterator[Op]:
    """Pre-order walk through nested loops and guards."""
    for op in ops:
        yield op
        if isinstance(op, ForLoop | If):
            yield from walk(op.body)


def read_values(ops: tuple[Op, ...]) -> frozenset[str]:
    """Every value some operation reads, views followed to the value they view (a view's
    operand does not count: a view nothing reads reads nothing). A loop reads its carried
    inits: a loop that carries on the result of the loop before reads that result."""
    alias = {op.result.name: op.operand.name for op in walk(ops) if isinstance(op, ExpandDims)}

    def root(name: str) -> str:
        while name in alias:
            name = alias[name]
        return name

    return frozenset(
        root(v.name) for op in walk(ops) if not isinstance(op, ExpandDims) for v in op.operands()
    )


def unread_results(loop: ForLoop, read: frozenset[str]) -> tuple[Carried, ...]:
    """The carried values of `loop` whose result nothing reads (`read` from
    `read_values`): the lowering peels the loop's last iteration so that it pushes no
    state block nobody pops (`loom.lower.compute`), and only then do the blocks the loop
    reads leave their waits inside the last iteration rather than after the loop, which
    the latency model reads (`loom.model.slots`)."""
    return tuple(c for c in loop.carried if c.result.name not in read)


def loops_enclosing(ops: tuple[Op, ...], target: Op) -> tuple[ForLoop, ...] | None:
    """The chain of loops around `target` (outermost first), or None if absent."""
    for op in ops:
        if op is target:
            return ()
        if isinstance(op, ForLoop | If):
            inner = loops_enclosing(op.body, target)
            if inner is not None:
                return ((op,) if isinstance(op, ForLoop) else ()) + inner
    return None


def accesses(ops: tuple[Op, ...]) -> tuple[Load | Store | Gather, ...]:
    """Loads, stores and gathers in walk order; a schedule's `Copy.op` indexes this."""
    return tuple(op for op in walk(ops) if isinstance(op, Load | Store | Gather))
