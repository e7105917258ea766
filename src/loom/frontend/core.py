"""The converter every handler module extends: the state of one import, the walk over an
FX graph (each node to the handler of its target), and the helpers that make values
(names, shapes, dtypes, operands) and emit ops.

Each handler module is a mixin of :class:`ImporterCore` with a table of its handlers,
joined by `loom.frontend.helion_import`. Imports run one way, each module importing only
those before it: `scope`, `core`, `indices`, the other handler modules (which never
import each other), `helion_import`; an import-linter contract in pyproject.toml keeps
it so.
"""

from __future__ import annotations

import inspect
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NoReturn

import torch
from helion._compiler.device_ir import GraphInfo
from helion.language import _tracing_ops, tile_ops
from helion.runtime.kernel import BoundKernel

from loom.errors import FrontendError
from loom.frontend.partials import with_pinned
from loom.frontend.scope import (
    Handler,
    LocalIndex,
    Operand,
    RowTotal,
    Scope,
    node_arg,
    node_line,
    with_extra_inputs,
)
from loom.ir.geometry import TILE
from loom.ir.integers import integer_read
from loom.ir.tile import Convert, Elementwise, Full, Op, Reduce, TensorArg, Value, Window
from loom.symbolic import Const, Expr, Sym, ceildiv

aten = torch.ops.aten

DTYPES = {
    torch.bfloat16: "bf16",
    torch.float16: "fp16",
    torch.float32: "fp32",
    torch.int32: "int32",
}
INDEX_DTYPES = (torch.int64,)
"""int64 tensors: outputs of argmax/argmin only, held as fp32 indices (no 64-bit tiles)."""
_INT_OPS = {"add", "sub", "mul", "maximum", "minimum", "neg", "abs", "relu"}
"""Elementwise ops computed on int32 tiles when every operand is an int32 tile."""


def dtype_hint(dtype: torch.dtype) -> str:
    """Why a tensor dtype has no tile format, and what to do instead."""
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        why = (
            "tt-lang-sim 1.1.6 cannot compute on IEEE-style fp8 tiles (its tile ops are torch "
            f"ops, and torch implements no arithmetic for {dtype}), and Tenstorrent's 8-bit "
            "format is the block float bfloat8_b"
        )
        return f"{why}; pass bf16 and store it as bfp8 with `--dtype bfp8`"
    if str(dtype).startswith("torch.float4"):
        why = "Tenstorrent's 4-bit format is the block float bfloat4_b, not an IEEE-style fp4"
        return f"{why}; pass bf16 and store it as bfp4 with `--dtype bfp4`"
    if dtype == torch.int64:
        why = "there are no 64-bit integer tiles (int64 outputs receive argmax/argmin indices)"
    elif dtype == torch.float64:
        why = "there are no 64-bit float tiles"
    else:
        why = (
            "Loom's integer tile format is int32 (tt-lang-sim also has no arithmetic on "
            "unsigned 32-bit tiles)"
        )
    return (
        f"{why}; the tile formats are bf16, fp16, fp32, int32 and the block floats bfp8 "
        "and bfp4: cast on the host (x.to(torch.int32) or x.float()) before the kernel"
    )


_MASK_DTYPE = "fp32"
"""Booleans (comparison results) are 0.0/1.0 masks in fp32 tiles."""
_PASS_THROUGH = {_tracing_ops._new_var, _tracing_ops._mask_to}
UNSUPPORTED_HINTS = {
    aten.cumsum.default: ("cumsum", "scans are not supported; use a row reduction (sum)"),
    aten.sort.default: ("sort", "sorting is not supported on the tile engines"),
    aten.topk.default: ("topk", "top-k selection is not supported on the tile engines"),
    aten.index.Tensor: (
        "tensor-indexed gather",
        "index with tiles or `:` only (data-dependent indices are not supported)",
    ),
    **{
        target: (
            "integer division or remainder of tile values (`tile.index // s`, `% s`)",
            "indices computed per element pick a different address for each row, a gather "
            "TT-Lang cannot issue (a data-movement kernel cannot read at a computed "
            "address); Loom gathers whole rows of a 2-D table by indices loaded from a "
            "tensor (`w[idx[tile_b], :]`): reshape the operand on the host so that the rows "
            "to pick are rows of a table and pass their indices as a tensor",
        )
        for target in (
            aten.div.Tensor_mode,
            aten.div.Scalar_mode,
            aten.floor_divide.default,
            aten.remainder.Tensor,
            aten.remainder.Scalar,
        )
    },
}

_TILE_POSITIONS = (tile_ops.tile_id, tile_ops.tile_begin, tile_ops.tile_end)
"""`tile.id`, `tile.begin`, `tile.end`: numbers, not tiles (an index by one is one element)."""

_SCALAR_FOLD: dict[object, Callable[..., float]] = {
    operator.add: operator.add,
    operator.sub: operator.sub,
    operator.mul: operator.mul,
    operator.truediv: operator.truediv,
    operator.neg: operator.neg,
    operator.pow: operator.pow,
    operator.abs: abs,
    abs: abs,
}
"""Python's arithmetic on plain numbers in the device code (scalar arguments included)."""
_HELION_INTERNAL = {"_associative_scan": "cumsum/cumprod/associative_scan (a scan)"}
"""Helion's internal ops by the construct a user wrote (torch.cumsum traces to
`_associative_scan`), so that a refusal names what is in the kernel."""


def def_line(fn: Callable[..., object]) -> int:
    """The line of `fn`'s `def` (below its decorators): where an error about the whole
    kernel (its grid, its shapes) points the user."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return 0
    for k, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ")):
            return first + k
    return first


class ImporterCore:
    """The state of one import and the helpers every handler module uses; call
    `loom.frontend.helion_import.HelionImporter.run` inside the bound kernel's environment."""

    def __init__(
        self,
        bound: BoundKernel,
        name: str,
        source_file: str,
        scalars: dict[str, float] | None = None,
        phase: int | None = None,
    ) -> None:
        self.bound = bound
        self.only_phase = phase
        """Import only this phase (a launch of its own); None: every phase, forwarded."""
        self.scalars = dict(scalars or {})
        self.env = bound.env
        self.device_ir = bound.host_function.device_ir
        self.name = name
        self.source_file = source_file
        self.where = f"{source_file}:{def_line(bound.kernel.fn)}"
        """The kernel's `def` as file:line, for errors about the whole kernel."""
        self.tensors: dict[str, TensorArg] = {}
        self.index_loads: dict[str, int] = {}
        """Values holding a tile's element indices (`tile.index`) -> its block id."""
        self.stored: set[str] = set()
        self.index_tensors: dict[str, torch.dtype] = {}
        """Integer tensors, held as fp32: only argmax/argmin indices may be stored there."""
        self.phase = 0
        self.root_scope = Scope()
        self.phase_stores: dict[str, tuple[int, tuple[Window, ...], Value]] = {}
        """Tensor -> (phase, window, value) of its last top-level store."""
        self.forwarded: set[str] = set()
        self.phase_loads: dict[str, list[tuple[int, tuple[Window, ...]]]] = {}
        """Tensor -> (phase, window) of each load, to catch a later phase overwriting
        what other blocks of an earlier phase still read."""
        self.index_values: set[str] = set()
        self.read_indices: set[str] = set()
        self.widened: dict[str, torch.dtype] = {}
        """int8/uint8/int16 tensors, read widened to int32 (loom.ir.integers)."""
        """int64 tensors the kernel loads (stored as int32 by the host, loom.ir.integers)."""
        """Values holding indices (argmax/argmin results), exact integers in fp32."""
        self.used_names: set[str] = set()
        self.superseded: set[str] = set()
        """Full-extent producers replaced by a leading-axis reduction's loop."""
        self.block_exprs: dict[int, Expr] = {}
        self.block_begin: dict[int, Expr] = {}
        self.block_index: dict[int, Sym] = {}
        self.gather_counts: dict[int, int] = {}  # reduction block id -> gathered block id
        self.pinned: dict[int, int] = {}
        """Block sizes fixed before solving: a host tensor's shape depends on them (one
        row per block, `loom.frontend.partials`)."""
        self.block_rows: set[str] = set()
        """2-D tensors a block writes one row of, at its `tile.id` (partials)."""
        self.handlers: dict[object, Handler] = self.handler_table()

    def handler_table(self) -> dict[object, Handler]:
        """The handler of each FX node target; the importer joins its modules' tables."""
        return {t: self._rejecter(what, hint) for t, (what, hint) in UNSUPPORTED_HINTS.items()}

    # ----- graph walking --------------------------------------------------------------
    def _convert_graph(self, graph: GraphInfo, scope: Scope, inputs: Sequence[object]) -> object:
        placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
        for node, value in zip(placeholders, inputs, strict=True):
            scope.values[node] = value
        result: object = None
        for node in graph.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                result = [scope.values.get(n) for n in node.args[0]] if node.args[0] else []
                continue
            scope.values[node] = self._convert_node(node, scope)
        return result

    def _convert_node(self, node: torch.fx.Node, scope: Scope) -> object:
        if node.target is _tracing_ops._inductor_lowering_extra:
            return None  # its inputs are read by the op that names it in `_extra_args`
        if node.kwargs.get("_extra_args"):
            node = with_extra_inputs(node)
        target = node.target
        if target in _PASS_THROUGH:
            return scope.values[node_arg(node, 0)]
        handler = self.handlers.get(target)
        if handler is not None:
            return handler(node, scope)
        folded = self._fold_scalars(node, scope)
        if folded is not None:
            return folded
        name = getattr(target, "__name__", str(target))
        if target in (operator.add, operator.sub, operator.mul, operator.floordiv):
            self._unsupported(
                node,
                f"index arithmetic `{name}` on tile offsets or loop bounds",
                "tile offsets may only index tensors; data-dependent extents (jagged or "
                "grouped loops whose bounds are read from a tensor) are not supported, Loom "
                "compiles static extents only",
            )
        name = name.split(".")[0] if "." in name else name
        self._unsupported(node, _HELION_INTERNAL.get(name, name))
        return None

    def _fold_scalars(self, node: torch.fx.Node, scope: Scope) -> float | None:
        """Python arithmetic on numbers only (`eps + 1.0`, `abs(scale)` of a scalar
        argument, which Loom compiles as a constant) is folded to its value."""
        fn = _SCALAR_FOLD.get(node.target)
        if fn is None or node.kwargs:
            return None
        args: list[float] = []
        for arg in node.args:
            value = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else arg
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            args.append(value)
        try:
            return float(fn(*args))
        except (ArithmeticError, ValueError, TypeError):
            return None  # refused below, by name

    def _unsupported(self, node: torch.fx.Node, what: str, hint: str | None = None) -> NoReturn:
        instead = hint or (
            "supported inside hl.tile loops are loads/stores indexed by tiles or `:`, "
            "hl.zeros/hl.full/full_like/zeros_like, matmul (addmm, mm, bmm, baddbmm, @, "
            "hl.dot), elementwise arithmetic, exp/exp2/log/sqrt/rsqrt/reciprocal/abs/neg/relu/"
            "sigmoid/tanh/silu/gelu, pow by a constant, comparisons and torch.where, "
            "sum/mean/amax/amin/var over any axis, argmax/argmin over the last two, "
            "`x[:, None]`, int32 tensors, "
            "hl.atomic_add (split-K), hl.barrier phases, `.to(dtype)` and "
            "`.transpose(-1, -2)` into a matmul (see docs/helion-surface.md)"
        )
        raise FrontendError(
            f"{self.source_file}:{node_line(node)}: Loom cannot compile `{what}` in kernel "
            f"{self.name!r}; {instead}."
        )

    def _rejecter(self, what: str, hint: str) -> Handler:
        def reject(node: torch.fx.Node, scope: Scope) -> object:
            self._unsupported(node, what, hint)
            return None

        return reject

    # ----- values ---------------------------------------------------------------------
    def _new_value(self, node: torch.fx.Node, name: str | None = None) -> Value:
        val = node.meta["val"]
        base = re.sub(r"\W", "_", name or node.name).strip("_") or "v"
        unique, k = base, 0
        while unique in self.used_names:
            k += 1
            unique = f"{base}_{k}"
        self.used_names.add(unique)
        if val.dtype in INDEX_DTYPES:
            self.index_values.add(unique)
        return Value(unique, tuple(self._dim(d, node) for d in val.shape), self._dtype(val, node))

    def _dim(self, dim: object, node: torch.fx.Node) -> Expr:
        if isinstance(dim, int):
            return Const(dim)
        bid = self.env.get_block_id(dim)
        if bid is not None and bid in self.block_exprs:
            return self.block_exprs[bid]
        if self._from_tile_offsets(dim):
            self._unsupported(
                node,
                f"a position computed from tile offsets ({dim})",
                "index with the tile itself (`g[tile_t]`), `tile.id` for a tensor with one "
                f"entry per block, or a constant index on a {TILE}x{TILE} tile edge; a "
                "scalar position inside a tile (`g[min(t.begin + c, n) - 1]`, the last row "
                "of a chunk) would be a gather of one element",
            )
        raise FrontendError(
            f"{self.source_file}:{node_line(node)}: kernel {self.name!r} has a tensor dimension "
            f"({dim}) that is neither a constant nor a tile of an hl.tile loop (a "
            "data-dependent extent, e.g. a jagged or grouped loop bound); Loom compiles "
            "static extents only (it binds the kernel on the argument shapes): use loop "
            "bounds known from the input shapes."
        )

    def _from_tile_offsets(self, dim: object) -> bool:
        """Whether a symbolic number is computed from a tile's begin, end or id."""
        expr = getattr(getattr(dim, "node", None), "expr", None)
        origins = self.bound.host_function.expr_to_origin
        kinds = {
            type(getattr(origins.get(sym), "origin", None)).__name__
            for sym in getattr(expr, "free_symbols", ())
        }
        return bool(kinds & {"TileBeginOrigin", "TileEndOrigin", "TileIdOrigin"})

    def _dtype(self, val: torch.Tensor, node: torch.fx.Node) -> str:
        if val.dtype == torch.bool:
            return _MASK_DTYPE
        read = integer_read(val.dtype)
        if read is not None:
            # int64 tile values (argmax/argmin, loaded indices, integer fills and
            # selections between them) are exact integers held in fp32; narrower
            # integers are int32 tiles (loom.ir.integers)
            return read.tile.value
        if val.dtype not in DTYPES:
            self._unsupported(node, f"dtype {val.dtype}", dtype_hint(val.dtype))
        return DTYPES[val.dtype]

    def _value(self, scope: Scope, arg: object, node: torch.fx.Node) -> Value:
        value = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else None
        if isinstance(value, LocalIndex):
            self._local_index_error(node, value)
        if isinstance(value, RowTotal):
            self._unsupported(
                node,
                "the sum of all elements of a vector used other than in arithmetic with "
                "a per-row vector",
                "use it in `+ - * /` with a 1-D value of the tile (`mean = s / total`), or "
                "reduce over one dim (`x.sum(-1)`)",
            )
        if isinstance(value, Expr) and not isinstance(value, Const):
            self._unsupported(
                node,
                f"arithmetic on a tile index or loop bound ({value})",
                "tile offsets may only index tensors; data-dependent extents (jagged or "
                "grouped loops whose bounds are read from a tensor) are not supported, Loom "
                "compiles static extents only",
            )
        if not isinstance(value, Value):
            self._unsupported(node, f"operand {arg}")
        return value

    def _operand(self, scope: Scope, arg: object, node: torch.fx.Node) -> Value | float:
        """A tile value, or a number (a literal or a scalar argument of the kernel)."""
        if isinstance(arg, bool):
            return float(arg)
        if isinstance(arg, int | float):
            return float(arg)
        value = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, Const):
            return float(value.value)
        return self._value(scope, arg, node)

    def _emit(self, scope: Scope, op: Op) -> Value | None:
        if isinstance(op, Elementwise):
            op = self._promoted(scope, self._outer_broadcast(scope, op))
        scope.ops.append(op)
        results = op.results()
        return results[0] if results else None

    def _outer_broadcast(self, scope: Scope, op: Elementwise) -> Elementwise:
        """An op between a column (m, 1) and a row (1, n), or a 1-D row (n) (an outer
        broadcast, e.g. a `tile_m.index[:, None]` mask on a row `v[None, :]`, or a
        `tile_n.index` mask on a column `v[:, None]`) makes an (m, n) value that neither
        operand has; elementwise ops broadcast one operand onto the other's shape only,
        so the first operand of the result's rank is broadcast to its shape first. A
        lower-rank operand counts with leading axes of 1, as numpy aligns shapes."""
        values = [a for a in op.args if isinstance(a, Value)]
        full = op.result.shape

        def aligned(v: Value) -> tuple[Expr, ...]:
            return (Const(1),) * (len(full) - v.rank) + v.shape

        if len(values) < 2 or any(aligned(v) == full for v in values):
            return op
        first = next((v for v in values if v.rank == len(full)), None)
        if first is None:
            return op
        wide = self._broadcast_to(scope, first, full, op.line)
        return replace(op, args=tuple(wide if a is first else a for a in op.args))

    def _broadcast_to(
        self, scope: Scope, value: Value, sizes: tuple[Expr, ...], line: int
    ) -> Value:
        """A value with an axis of extent 1 stored into a window wider there
        (`out[tile_m, :] = v[:, None]`) is broadcast across it, as torch's setitem does:
        added to a zero fill of the window's shape (elementwise ops broadcast a row or a
        column). Stored as it is, the one-wide block would be written as the whole window."""
        pairs = list(zip(value.shape, sizes, strict=False))
        if value.rank != len(sizes) or not any(v == Const(1) != s for v, s in pairs):
            return value
        zeros = self._renamed(Value("", sizes, value.dtype), f"{value.name}_fill")
        self._emit(scope, Full(zeros, 0.0, line))
        wide = self._renamed(Value("", sizes, value.dtype), f"{value.name}_wide")
        result = self._emit(scope, Elementwise(wide, "add", (value, zeros), line))
        assert result is not None
        return result

    def _promoted(self, scope: Scope, op: Elementwise) -> Op:
        """One format per elementwise op: an op of `_INT_OPS` between int32 tiles into an
        int32 result runs on int32 tiles (exact at any magnitude); any other op touching
        int32 (a constant, a 0/1 mask, an fp32 operand: TT-Lang's `fill` makes float
        blocks) runs in fp32 on its int32 operands converted, as torch's type promotion
        does, exact below 2^24, and an int32 result is its fp32 result converted."""
        ints = (
            op.result.dtype == "int32"
            and op.op in _INT_OPS
            and all(isinstance(a, Value) and a.dtype == "int32" for a in op.args)
        )
        if ints or not any(v.dtype == "int32" for v in (*op.operands(), op.result)):
            return op
        args = tuple(
            self._cast(scope, a, "fp32", op.line)
            if isinstance(a, Value) and a.dtype == "int32"
            else a
            for a in op.args
        )
        if op.result.dtype != "int32":
            return replace(op, args=args)
        wide = self._renamed(replace(op.result, dtype="fp32"), f"{op.result.name}_fp32")
        scope.ops.append(replace(op, result=wide, args=args))
        return Convert(op.result, wide, op.line)

    def _cast(self, scope: Scope, value: Value, dtype: str, line: int) -> Value:
        if value.dtype == dtype:
            return value
        result = self._renamed(Value("", value.shape, dtype), f"{value.name}_{dtype}")
        self._emit(scope, Convert(result, value, line))
        return result

    def _renamed(self, value: Value, name: str) -> Value:
        unique, k = name, 0
        while unique in self.used_names:
            k += 1
            unique = f"{name}_{k}"
        self.used_names.add(unique)
        return Value(unique, value.shape, value.dtype)

    def _temp(self, like: Value, base: str) -> Value:
        """A fresh value shaped like `like` (a step of a rewrite)."""
        return self._renamed(like, base)

    def _ew(
        self, scope: Scope, op: str, args: Sequence[Operand], like: Value, line: int, name: str
    ) -> Value:
        result = self._temp(like, name)
        self._emit(scope, Elementwise(result, op, tuple(args), line))
        return result

    def _not_equal(
        self, scope: Scope, a: Operand, b: Operand, result: Value, negate: bool, line: int
    ) -> Value:
        """`a != b` as `(a < b) + (a > b)` (no `ne` primitive; the masks never overlap,
        so the sum is exact), or `a == b` as one minus that when `negate`."""
        like = Value("", result.shape, "fp32")
        below = self._ew(scope, "lt", (a, b), like, line, "cmp_lt")
        above = self._ew(scope, "gt", (a, b), like, line, "cmp_gt")
        if negate:
            mask = self._ew(scope, "add", (below, above), like, line, "cmp")
            out = self._emit(scope, Elementwise(result, "sub", (1.0, mask), line))
        else:
            out = self._emit(scope, Elementwise(result, "add", (below, above), line))
        assert out is not None
        return out

    def _total_as(self, scope: Scope, total: RowTotal, like: Value) -> Value:
        """`total` in the shape of a 1-D value `like` (one per row): the vector broadcast
        down that many rows and reduced along them, every element the total."""
        if like.rank != 1:
            raise FrontendError(
                f"{self.source_file}:{total.line}: Loom cannot compile the sum of all "
                f"elements of a vector used with a rank-{like.rank} value in kernel "
                f"{self.name!r}; use it in arithmetic with a 1-D value of the tile "
                "(`mean = s / total`), or reduce over one dim (`x.sum(-1)`)."
            )
        row = self._cast(scope, total.row, "fp32", total.line)
        wide = Value("", (like.shape[0], row.shape[0]), "fp32")
        zeros = self._temp(wide, f"{row.name}_rows")
        self._emit(scope, Full(zeros, 0.0, total.line))
        spread = self._ew(scope, "add", (zeros, row), wide, total.line, f"{row.name}_spread")
        result = self._temp(Value("", like.shape, "fp32"), f"{row.name}_total")
        self._emit(scope, Reduce(result, "sum", spread, 1, total.line))
        return result

    def _local_index_error(self, node: torch.fx.Node, value: LocalIndex) -> NoReturn:
        self._unsupported(
            node,
            f"the {value.what} of a tile of a looped dim used without its tile's begin",
            f"add the tile's begin (`x[tile_m, tile_n].{value.what}(-1) + tile_n.begin`), "
            "the index in the tensor, which the running (value, index) pair of a looped "
            f"{value.what} carries",
        )

    # ----- blocks ---------------------------------------------------------------------
    def _with_pinned(self, size: object) -> int | None:
        """`size` in the block sizes fixed before solving (`loom.frontend.partials`)."""
        return with_pinned(size, self.bound.host_function.expr_to_origin, self.pinned)

    def _block_of(self, entry: object) -> int | None:
        if isinstance(entry, torch.fx.Node) and isinstance(entry.meta.get("val"), torch.SymInt):
            bid: int | None = self.env.get_block_id(entry.meta["val"])
            return bid
        return None

    def _window(
        self, node: torch.fx.Node, tensor: str, index: Sequence[object]
    ) -> tuple[Window, ...]:
        shape = self.tensors[tensor].shape
        if len(index) != len(shape):
            self._unsupported(node, f"indexing {tensor} with {len(index)} of {len(shape)} dims")
        windows = []
        for dim, entry in zip(shape, index, strict=True):
            if isinstance(entry, Window):  # built by the caller (a shifted tile)
                windows.append(entry)
                continue
            if isinstance(entry, slice):
                windows.append(self._static_slice(node, tensor, dim, entry))
                continue
            if isinstance(entry, torch.fx.Node) and self._position_of_wide_tile(entry):
                windows.append(self._block_entry(node, tensor, entry, len(windows), len(shape)))
                continue
            bid = self._block_of(entry)
            if bid is None or bid not in self.block_begin:
                windows.append(self._element(node, tensor, dim, entry, len(windows), len(shape)))
                continue
            windows.append(Window(self.block_begin[bid], self.block_exprs[bid]))
        return tuple(windows)

    def _block_entry(
        self, node: torch.fx.Node, tensor: str, entry: torch.fx.Node, pos: int, rank: int
    ) -> Window:
        """`t[tile.id, :]`: the block's own entry of a tensor with one entry per block
        (partials, `loom.frontend.partials`), in a leading dim or in the rows of the last
        two (a 2-D tensor's rows are then stored one tile row per block)."""
        what = getattr(entry.target, "__name__", "tile_position").replace("_", ".")
        bid = self._block_of(entry.args[0])
        index = self.block_index.get(bid) if bid is not None else None
        if entry.target is not tile_ops.tile_id or bid is None or index is None:
            self._unsupported(
                node,
                f"indexing {tensor} with {what} (one element per block)",
                "index with the tile itself (`x[tile_m, :]`), or with `tile.id` for a "
                "tensor with one row per block (`partials[tile_m.id, :]`)",
            )
        if self.block_begin[bid] != index * self.block_exprs[bid]:
            self._unsupported(
                node,
                f"indexing {tensor} with tile.id of a loop that does not start at 0",
                "loop from 0 (`hl.tile(n)`), or index with the tile itself",
            )
        if pos == rank - 1:
            self._unsupported(
                node,
                f"indexing {tensor} with tile.id in its last dim (one column per block)",
                f"a block writes whole {TILE}x{TILE} tiles, so one column of a tile cannot "
                "be a block's own: put the per-block index first (`tmp[tile_k.id, tile_m, "
                "tile_n]` reduced with `.sum(0)`, or `[blocks, 1]` for one number per block)",
            )
        if pos == rank - 2:
            self.block_rows.add(tensor)  # one row per block: one tile row each
        return Window(index, Const(1))

    def _position_of_wide_tile(self, entry: torch.fx.Node) -> bool:
        """`tile.id`, `tile.begin` or `tile.end` of a tile wider than one element: a
        number per block, not the tile (of a one-wide tile, `block_size=1`, `tile.begin`
        and `tile.id` index its one element, as the tile does)."""
        if entry.target not in _TILE_POSITIONS:
            return False
        bid = self._block_of(entry.args[0])
        size = self.block_exprs.get(bid) if bid is not None else None
        one = size == Const(1) or (isinstance(size, Sym) and size.upper == 1)
        return not one or entry.target is tile_ops.tile_end

    def _element(
        self, node: torch.fx.Node, tensor: str, dim: int, entry: object, pos: int, rank: int
    ) -> Window:
        """A constant index (`x[tile_m, 0]`, `x[0, tile_n]`, `x[2, tile_m, tile_n]`): a
        window one element wide, which drops that dim from the value (of the last two
        dims: a column of one value per row, or a row, as a 1-D tensor's window does). In
        the last two dims it is on a tile edge (an index inside a tile is picked out of
        its tile, `loom.frontend.gathers`)."""
        if isinstance(entry, bool) or not isinstance(entry, int) or rank < 2:
            self._unsupported(
                node,
                f"index {entry} of {tensor}",
                "index with tiles, `:`, static slices, or a constant into one dim of a "
                "tensor of rank 2 or more; positions computed from tile offsets "
                "(`tile.begin`, `tile.index * n`) or read from a tensor (a gather) are not "
                "supported",
            )
        if not -dim <= entry < dim:
            self._unsupported(node, f"index {entry} of {tensor} (its dim {pos} has {dim})")
        index = entry % dim
        if pos >= rank - 2 and dim > TILE and index % TILE:
            self._unsupported(
                node,
                f"index {entry} of {tensor} (inside a {TILE}x{TILE} tile, not on its edge)",
                f"a constant index must be a multiple of {TILE} (the first row or column of "
                f"a tile: `x[tile_m, 0]`), as Loom reads whole {TILE}x{TILE} tiles; slice "
                "the element out on the host, or pass it as its own tensor",
            )
        return Window(Const(index), Const(1))

    def _static_slice(self, node: torch.fx.Node, tensor: str, dim: int, entry: slice) -> Window:
        """`:` (the whole dim) or a static partial slice `x[tile, :128]`, `out[tile, 128:]`:
        a window of constant offset and extent, on whole 32x32 tiles where the dim is
        wider than one tile."""
        start, stop, step = entry.start, entry.stop, entry.step
        bounds = [b for b in (start, stop) if b is not None]
        if step not in (None, 1) or not all(isinstance(b, int) for b in bounds):
            self._unsupported(
                node,
                f"the slice {start}:{stop}{'' if step is None else f':{step}'} of {tensor}",
                "slice with constant bounds and step 1 (`x[tile, :128]`, `x[tile, 128:]`); "
                "bounds read from a tensor are data-dependent extents",
            )
        begin, end = slice(start, stop).indices(dim)[:2]
        if end <= begin:
            self._unsupported(node, f"the empty slice {start}:{stop} of {tensor}")
        if dim > TILE and (begin % TILE or (end - begin) % TILE):
            self._unsupported(
                node,
                f"the slice {start}:{stop} of {tensor} (elements {begin}..{end - 1})",
                f"a partial slice must start and end on whole {TILE}x{TILE} tiles (multiples "
                f"of {TILE}); pad the tensor or choose sizes that are multiples of {TILE}",
            )
        return Window(Const(begin), Const(end - begin))

    def _is_grid_block(self, bid: int) -> bool:
        return any(bid in ids for ids in self.device_ir.grid_block_ids)

    def _enclosing_extent(self, bid: int) -> int:
        """Upper bound of a loop whose extent is another tile (`hl.tile(t.begin, t.end)`,
        `hl.tile(0, t.end)`)."""
        bounds = (tile_ops.tile_begin, tile_ops.tile_end)
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.op == "call_function" and node.target in bounds:
                    outer = self.env.block_sizes[self.env.get_block_id(node.args[0].meta["val"])]
                    if isinstance(outer.size, int):
                        return outer.size
        raise FrontendError(
            f"{self.where}: kernel {self.name!r}: cannot bound the extent of loop block {bid}: the "
            "argument shapes do not fix it (a data-dependent extent); use loop bounds known "
            "from the input shapes."
        )

    def _num_tiles(self, tile_block: int) -> Expr:
        info = self.env.block_sizes[tile_block]
        return ceildiv(int(info.size), self.block_exprs[tile_block])
