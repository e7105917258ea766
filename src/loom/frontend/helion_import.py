"""Convert a bound Helion kernel into a TileProgram (the only module reading Helion IR).

Helion is used as the parser and type checker: `kernel.bind(args)` traces the device code
into FX graphs (one per loop body) whose nodes carry fake tensors with symbolic tile
shapes. This module walks those graphs and rebuilds the block program with Loom's own
symbols, named after the Helion loop variables (`tile_m`, `tile_n`, ...).

Loom compiles whole tiles only: every tile size must divide its extent (the model adds
that constraint), so Helion's ragged-tile masks (`_mask_to`) are no-ops here.

Two Helion constructs that synchronise blocks become block-local forms: `hl.atomic_add`
from a split grid axis is a gather of the partials to one block (a split reduction), and
phases separated by `hl.barrier` on the same grid run in order on each core, a later
phase reading its own block's tiles from the earlier phase's values. A later phase that
reads tiles other blocks wrote needs a grid-wide barrier: each phase is then imported on
its own (`phase=`) and becomes a launch of its own (see `loom.frontend.importer`).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import operator
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NoReturn, cast

import torch
from helion._compiler.compile_environment import FixedBlockSizeSource
from helion._compiler.device_ir import ForLoopGraphInfo, GraphInfo, IfGraphInfo, RootGraphInfo
from helion.language import (
    _tracing_ops,
    atomic_ops,
    creation_ops,
    matmul_ops,
    memory_ops,
    tile_ops,
    view_ops,
)
from helion.runtime.kernel import BoundKernel

from loom.errors import FrontendError
from loom.frontend.language import gather
from loom.frontend.leading import drop_dead
from loom.frontend.surface import LocalIndex, SurfaceOps
from loom.ir.geometry import TILE
from loom.ir.tile import (
    Carried,
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Gather,
    GridAxis,
    If,
    Load,
    Matmul,
    Op,
    Reduce,
    Store,
    TensorArg,
    TileProgram,
    Value,
    Window,
    walk,
)
from loom.symbolic import Cond, Const, Expr, Sym, as_expr, ceildiv, cmp

aten = torch.ops.aten
prims = torch.ops.prims

_DTYPES = {
    torch.bfloat16: "bf16",
    torch.float16: "fp16",
    torch.float32: "fp32",
    torch.int32: "int32",
}
_INDEX_DTYPES = (torch.int64,)
"""int64 tensors: outputs of argmax/argmin only, held as fp32 indices (no 64-bit tiles)."""
_INT_OPS = {"add", "sub", "mul", "maximum", "minimum", "neg", "abs", "relu"}
"""Elementwise ops computed on int32 tiles when every operand is an int32 tile."""


def _dtype_hint(dtype: torch.dtype) -> str:
    """Why a tensor dtype has no tile format, and what to do instead."""
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        why = (
            "tt-lang-sim 1.1.6 cannot compute on IEEE-style fp8 tiles (its tile ops are torch "
            f"ops, and torch implements no arithmetic for {dtype}), and Tenstorrent's 8-bit "
            "format is the block float bfloat8_b"
        )
        return f"{why}; pass bf16 and store it as bfp8 with `--dtype bfp8`"
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
TILE_ALIGN = TILE

_UNARY = {
    aten.exp.default: "exp",
    aten.exp2.default: "exp2",
    aten.log.default: "log",
    aten.neg.default: "neg",
    aten.reciprocal.default: "recip",
    aten.sqrt.default: "sqrt",
    aten.rsqrt.default: "rsqrt",
}
_BINARY = {
    aten.add.Tensor: "add",
    aten.sub.Tensor: "sub",
    aten.mul.Tensor: "mul",
    aten.div.Tensor: "div",
    aten.maximum.default: "maximum",
    aten.minimum.default: "minimum",
}
_REDUCE = {aten.amax.default: "max", aten.sum.dim_IntList: "sum"}
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

_PASS_THROUGH = {_tracing_ops._new_var, _tracing_ops._mask_to}


@dataclass(frozen=True)
class _Transposed:
    """`x.transpose(-1, -2)` waiting to be folded into a matmul's right operand."""

    value: Value


@dataclass
class _Scope:
    """Values of one FX graph being converted, and the ops emitted so far."""

    values: dict[torch.fx.Node, object] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)


@dataclass(frozen=True)
class _NodeView:
    """An FX node seen with its `None` placeholders filled from `_extra_args` (Helion
    passes an op's inputs that way when Inductor lowers it into several buffers)."""

    target: object
    args: tuple[object, ...]
    kwargs: dict[str, object]
    meta: dict[str, object]
    name: str
    users: dict[object, None]


def _with_extra_inputs(node: torch.fx.Node) -> torch.fx.Node:
    inputs: list[object] = []
    extras = node.kwargs["_extra_args"]
    for extra in extras if isinstance(extras, list | tuple) else ():
        if isinstance(extra, torch.fx.Node):
            inputs.extend(_seq_arg(extra, 0))
    feed = iter(inputs)
    args = tuple(next(feed, None) if a is None else a for a in node.args)
    kwargs: dict[str, object] = {k: v for k, v in node.kwargs.items() if k != "_extra_args"}
    users: dict[object, None] = dict.fromkeys(node.users)
    view = _NodeView(node.target, args, kwargs, node.meta, node.name, users)
    # The handlers read only target/args/kwargs/meta/name/users, which the view has: it
    # stands in for the FX node it was made from.
    return cast("torch.fx.Node", view)


# FX types a node's arguments as one wide union (`torch.fx.node.Argument`); what each
# position holds is fixed by the Helion op the node calls. These accessors check it, so
# a Helion release that changes an op's signature fails here with a clear internal error.
def _node_arg(node: torch.fx.Node, i: int) -> torch.fx.Node:
    arg = node.args[i]
    if not isinstance(arg, torch.fx.Node):
        raise TypeError(f"{node.target}: argument {i} is {arg!r}, not an FX node")
    return arg


def _seq_arg(node: torch.fx.Node, i: int) -> Sequence[object]:
    arg = node.args[i]
    if not isinstance(arg, list | tuple):
        raise TypeError(f"{node.target}: argument {i} is {arg!r}, not a list")
    return arg


def _int_arg(node: torch.fx.Node, i: int) -> int:
    arg = node.args[i]
    if not isinstance(arg, int) or isinstance(arg, bool):
        raise TypeError(f"{node.target}: argument {i} is {arg!r}, not an integer")
    return arg


def _as_node(arg: object) -> torch.fx.Node:
    if not isinstance(arg, torch.fx.Node):
        raise TypeError(f"{arg!r} is not an FX node")
    return arg


def _sympy_of(val: torch.SymInt | torch.SymFloat) -> object:
    """The sympy expression behind a symbolic number (Helion keys host origins by it)."""
    sympy_of: Callable[[], object] = val._sympy_  # torch leaves this method unannotated
    return sympy_of()


def _line(node: torch.fx.Node) -> int:
    match = re.search(r":(\d+)$", str(node.meta.get("location", "")))
    return int(match.group(1)) if match else 0


class GridBarrierNeeded(Exception):
    """The phases cannot run in order on each core: a later phase reads tiles other
    blocks wrote, overwrites tiles other blocks read, or runs on another grid. The
    importer is then run once per phase (one launch each, a grid-wide barrier between)."""


class HelionImporter(SurfaceOps):
    """One-shot converter; call :meth:`run` inside the bound kernel's environment."""

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
        self.tensors: dict[str, TensorArg] = {}
        self.index_loads: dict[str, int] = {}
        """Values holding a tile's element indices (`tile.index`) -> its block id."""
        self.stored: set[str] = set()
        self.index_tensors: dict[str, torch.dtype] = {}
        """Integer tensors, held as fp32: only argmax/argmin indices may be stored there."""
        self.phase = 0
        self.root_scope = _Scope()
        self.phase_stores: dict[str, tuple[int, tuple[Window, ...], Value]] = {}
        """Tensor -> (phase, window, value) of its last top-level store."""
        self.forwarded: set[str] = set()
        self.phase_loads: dict[str, list[tuple[int, tuple[Window, ...]]]] = {}
        """Tensor -> (phase, window) of each load, to catch a later phase overwriting
        what other blocks of an earlier phase still read."""
        self.index_values: set[str] = set()
        """Values holding indices (argmax/argmin results), exact integers in fp32."""
        self.used_names: set[str] = set()
        self.superseded: set[str] = set()
        """Full-extent producers replaced by a leading-axis reduction's loop."""
        self.block_exprs: dict[int, Expr] = {}
        self.block_begin: dict[int, Expr] = {}
        self.block_index: dict[int, Sym] = {}
        self.gather_counts: dict[int, int] = {}  # reduction block id -> gathered block id
        self.handlers: dict[object, Callable[[torch.fx.Node, _Scope], object]] = {
            _tracing_ops._host_tensor: self._host_tensor,
            _tracing_ops._get_symnode: self._symnode,
            _tracing_ops._for_loop: self._for_loop,
            _tracing_ops._phi: self._phi,
            _tracing_ops._if: self._if,
            memory_ops.load: self._load,
            memory_ops.store: self._store,
            creation_ops.full: self._full,
            matmul_ops.dot: self._dot,
            view_ops.subscript: self._subscript,
            tile_ops.tile_begin: self._tile_begin,
            tile_ops.tile_end: self._tile_end,
            tile_ops.tile_id: self._tile_id,
            tile_ops.tile_index: self._tile_index,
            gather: self._gather,
            atomic_ops.atomic_add: self._atomic_add,
            operator.getitem: self._getitem,
            operator.eq: self._eq,
            aten.sym_size.int: self._sym_size,
            aten.addmm.default: self._addmm,
            aten.baddbmm.default: self._addmm,
            aten.mm.default: self._mm,
            aten.bmm.default: self._mm,
            aten.permute.default: self._permute,
            aten.transpose.int: self._transpose,
            prims.convert_element_type.default: self._convert,
            aten._to_copy.default: self._convert,
        }
        self.handlers.update(self.surface_handlers())

    # ----- entry -------------------------------------------------------------------
    def run(self) -> TileProgram:
        self._scan_gathers()
        self._make_symbols()
        grid_ids = self.device_ir.grid_block_ids
        if self.only_phase is not None:  # a launch of its own, on its own grid
            grid = tuple(self._grid_axis(bid) for bid in grid_ids[self.only_phase])
        else:
            grid = tuple(self._grid_axis(bid) for bid in grid_ids[0])
            for later in grid_ids[1:]:
                self._same_grid(grid_ids[0], later)
        roots = [g for g in self.device_ir.graphs if isinstance(g, RootGraphInfo)]
        scope = self.root_scope = _Scope()
        for phase, root in enumerate(roots):
            self.phase = phase
            if self.only_phase is None or phase == self.only_phase:
                self._convert_graph(root, scope, inputs=())
        if len(roots) > 1:
            scope.ops = list(self._drop_scratch(tuple(scope.ops)))
        body = _without_unused_index_loads(drop_dead(tuple(scope.ops), self.superseded))
        loaded = {op.tensor for op in walk(body) if isinstance(op, Load)}
        args = tuple(
            TensorArg(t.name, t.shape, t.dtype, "output" if t.name in self.stored else "input")
            for t in self.tensors.values()
            if t.name in loaded or t.name in self.stored or t.name not in self._index_inputs()
        )
        notes = tuple(
            f"{name} ({dtype}) holds argmax/argmin indices as fp32 (exact below 2^24)"
            for name, dtype in self.index_tensors.items()
        )
        return TileProgram(
            name=self.name,
            args=args,
            grid=grid,
            body=body,
            source_file=self.source_file,
            notes=notes,
        )

    # ----- phases (top-level grid loops separated by hl.barrier) ----------------------
    def _same_grid(self, first: list[int], later: list[int]) -> None:
        """A later phase on the same grid takes the first phase's tile symbols and
        indices, so block (i, j) of every phase runs on the same core; a phase on another
        grid needs a launch of its own."""
        sizes = [self.env.block_sizes[b].size for b in first]
        others = [self.env.block_sizes[b].size for b in later]
        same = len(first) == len(later) and all(
            self.block_exprs[a] == self.block_exprs[b] for a, b in zip(first, later, strict=False)
        )
        if sizes != others or not same:
            raise GridBarrierNeeded("grid")
        for a, b in zip(first, later, strict=True):
            self.block_index[b] = self.block_index[a]
            self.block_begin[b] = self.block_begin[a]

    def _forwarded(
        self, node: torch.fx.Node, scope: _Scope, tensor: str, window: tuple[Window, ...]
    ) -> Value | None:
        """A later phase reading what an earlier phase stored: the same block wrote that
        window, so its value is forwarded (no DRAM round trip, no grid-wide barrier)."""
        written = self.phase_stores.get(tensor)
        if written is None or written[0] == self.phase:
            return None
        _, where, value = written
        if where != window:
            raise GridBarrierNeeded(tensor)
        self.forwarded.add(tensor)
        return self._cast(scope, value, self.tensors[tensor].dtype, _line(node))

    def _drop_scratch(self, ops: tuple[Op, ...]) -> tuple[Op, ...]:
        """Stores of tensors only read back by later phases and not returned by the
        kernel: scratch between phases, which forwarding keeps in L1."""
        returned = self._returned_names()
        scratch = {t for t in self.forwarded if returned is not None and t not in returned}
        kept: list[Op] = []
        for op in ops:
            if isinstance(op, Store) and op.tensor in scratch:
                continue
            if isinstance(op, ForLoop | If):
                op = replace(op, body=self._drop_scratch(op.body))
            kept.append(op)
        for name in scratch:
            self.stored.discard(name)
            self.tensors.pop(name, None)
        return tuple(kept)

    def _returned_names(self) -> set[str] | None:
        tree = self._kernel_ast
        if tree is None:
            return None
        names: set[str] = set()
        for stmt in ast.walk(tree):
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                names.update(n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name))
        return names

    @cached_property
    def _kernel_ast(self) -> ast.AST | None:
        """The kernel function's syntax tree, parsed once (None when its source is unavailable)."""
        try:
            return ast.parse(textwrap.dedent(inspect.getsource(self.bound.kernel.fn)))
        except (OSError, TypeError, SyntaxError):
            return None

    def _index_inputs(self) -> set[str]:
        """Index vectors Loom adds as inputs (`tile.index`, argmax's candidates)."""
        return {name for name in self.tensors if name.endswith("_index")}

    # ----- symbols ---------------------------------------------------------------
    def _scan_gathers(self) -> None:
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.op == "call_function" and node.target is gather:
                    rows = node.meta["val"].shape[0]
                    count_id = self.env.get_block_id(rows)
                    tile_id = self.env.get_block_id(node.args[0].meta["val"])
                    if count_id is not None and tile_id is not None:
                        self.gather_counts[count_id] = tile_id

    def _tile_positions(self) -> dict[int, bool]:
        """Block ids used in one of the last two dims of some load or store."""
        in_tile_dims: dict[int, bool] = {}
        for graph in self.device_ir.graphs:
            for node in graph.graph.nodes:
                if node.op != "call_function" or node.target not in (
                    memory_ops.load,
                    memory_ops.store,
                ):
                    continue
                index = node.args[1]
                for pos, entry in enumerate(index):
                    bid = self._block_of(entry)
                    if bid is not None:
                        tiled = pos >= len(index) - 2
                        in_tile_dims[bid] = in_tile_dims.get(bid, False) or tiled
        return in_tile_dims

    def _block_of(self, entry: object) -> int | None:
        if isinstance(entry, torch.fx.Node) and isinstance(entry.meta.get("val"), torch.SymInt):
            bid: int | None = self.env.get_block_id(entry.meta["val"])
            return bid
        return None

    def _tile_block(self, node: torch.fx.Node) -> int:
        """Block id of the tile a `tile.begin/end/id/index` node reads (its argument 0)."""
        bid = self._block_of(node.args[0])
        if bid is None:
            self._unsupported(node, f"{node.target} of a value that is not a tile")
        return bid

    def _tensor_of(self, scope: _Scope, node: torch.fx.Node) -> str:
        """Name of the host tensor a load or store node reads or writes (argument 0)."""
        tensor = scope.values[_node_arg(node, 0)]
        if not isinstance(tensor, str):
            self._unsupported(node, f"a load or store of {tensor} (not a kernel argument)")
        return tensor

    def _make_symbols(self) -> None:
        tiled = self._tile_positions()
        by_name: dict[str, Sym] = {}
        for info in self.env.block_sizes:
            bid = info.block_id
            if not info.debug_names:
                if isinstance(info.var, int):
                    self.block_exprs[bid] = Const(info.var)
                elif info.reduction and isinstance(info.size, int):
                    self.block_exprs[bid] = Const(info.size)  # a full-row `:` slice
                if bid not in self.block_exprs and not self._is_grid_block(bid):
                    continue
            name = sorted(info.debug_names)[0] if info.debug_names else self._grid_name(bid)
            if bid in self.block_exprs:
                continue
            if name in by_name:
                self.block_exprs[bid] = by_name[name]
                continue
            upper = info.size if isinstance(info.size, int) else None
            if upper is None:
                upper = self._enclosing_extent(bid)
            if isinstance(info.block_size_source, FixedBlockSizeSource):
                fixed = int(info.block_size_source.value)
                sym = Sym(name, fixed, fixed, 1, "tile")
            else:
                align = TILE_ALIGN if tiled.get(bid, True) else 1
                if upper < align:
                    align = 1
                sym = Sym(name, align, upper, align, "tile")
            by_name[name] = sym
            self.block_exprs[bid] = sym
        for count_id, tile_id in self.gather_counts.items():
            self.block_exprs[count_id] = self._num_tiles(tile_id)

    def _is_grid_block(self, bid: int) -> bool:
        return any(bid in ids for ids in self.device_ir.grid_block_ids)

    def _grid_name(self, bid: int) -> str:
        """`for tile in hl.tile(x.size())` names no dimension: call them tile_d0, tile_d1."""
        for ids in self.device_ir.grid_block_ids:
            if bid in ids:
                return f"tile_d{ids.index(bid)}"
        return f"tile_b{bid}"

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
            f"kernel {self.name!r}: cannot bound the extent of loop block {bid}; use "
            "static shapes (@helion.kernel(static_shapes=True))."
        )

    def _num_tiles(self, tile_block: int) -> Expr:
        info = self.env.block_sizes[tile_block]
        return ceildiv(int(info.size), self.block_exprs[tile_block])

    def _grid_axis(self, bid: int) -> GridAxis:
        info = self.env.block_sizes[bid]
        sym = self.block_exprs[bid]
        if not isinstance(sym, Sym) or not isinstance(info.size, int):
            raise FrontendError(
                f"kernel {self.name!r}: grid axis {bid} has no named tile; write the grid as "
                "`for tile_x, tile_y in hl.tile([...])`."
            )
        index = Sym(f"{sym.name}_id", 0, max(info.size - 1, 0), 1, "index")
        self.block_index[bid] = index
        self.block_begin[bid] = index * sym
        return GridAxis(tile=sym, index=index, extent=info.size)

    # ----- graph walking -----------------------------------------------------------
    def _convert_graph(self, graph: GraphInfo, scope: _Scope, inputs: Sequence[object]) -> object:
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

    def _convert_node(self, node: torch.fx.Node, scope: _Scope) -> object:
        if node.target is _tracing_ops._inductor_lowering_extra:
            return None  # its inputs are read by the op that names it in `_extra_args`
        if node.kwargs.get("_extra_args"):
            node = _with_extra_inputs(node)
        target = node.target
        if target in _PASS_THROUGH:
            return scope.values[_node_arg(node, 0)]
        handler = self.handlers.get(target)
        if handler is not None:
            return handler(node, scope)
        if target in _UNARY:
            return self._elementwise(node, scope, _UNARY[target], node.args[:1])
        if target is aten.add.Tensor:
            offset = self._plus_begin(node, scope)
            if offset is not None:
                return offset
        if target in _BINARY:
            if node.kwargs.get("alpha", 1) != 1:
                self._unsupported(node, "add/sub with alpha")
            return self._elementwise(node, scope, _BINARY[target], node.args[:2])
        if target in _REDUCE:
            return self._reduce(node, scope, _REDUCE[target])
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

    def _fold_scalars(self, node: torch.fx.Node, scope: _Scope) -> float | None:
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
            f"{self.source_file}:{_line(node)}: Loom cannot compile `{what}` in kernel "
            f"{self.name!r}; {instead}."
        )

    # ----- values ------------------------------------------------------------------
    def _new_value(self, node: torch.fx.Node, name: str | None = None) -> Value:
        val = node.meta["val"]
        base = re.sub(r"\W", "_", name or node.name).strip("_") or "v"
        unique, k = base, 0
        while unique in self.used_names:
            k += 1
            unique = f"{base}_{k}"
        self.used_names.add(unique)
        if val.dtype in _INDEX_DTYPES:
            self.index_values.add(unique)
        return Value(unique, tuple(self._dim(d, node) for d in val.shape), self._dtype(val, node))

    def _dim(self, dim: object, node: torch.fx.Node) -> Expr:
        if isinstance(dim, int):
            return Const(dim)
        bid = self.env.get_block_id(dim)
        if bid is not None and bid in self.block_exprs:
            return self.block_exprs[bid]
        raise FrontendError(
            f"{self.source_file}:{_line(node)}: kernel {self.name!r} has a tensor dimension "
            f"({dim}) that is neither a constant nor a tile of an hl.tile loop (a "
            "data-dependent extent, e.g. a jagged or grouped loop bound, or a shape that is "
            "not static); Loom compiles static extents only: use "
            "@helion.kernel(static_shapes=True) and loop bounds known from the input shapes."
        )

    def _dtype(self, val: torch.Tensor, node: torch.fx.Node) -> str:
        if val.dtype == torch.bool:
            return _MASK_DTYPE
        if val.dtype in _INDEX_DTYPES:
            # int64 tile values come only from argmax/argmin, integer fills and
            # selections between them (int64 tensors cannot be loaded or converted to):
            # exact integers held in fp32
            return "fp32"
        if val.dtype not in _DTYPES:
            self._unsupported(node, f"dtype {val.dtype}", _dtype_hint(val.dtype))
        return _DTYPES[val.dtype]

    def _value(self, scope: _Scope, arg: object, node: torch.fx.Node) -> Value:
        value = scope.values.get(arg) if isinstance(arg, torch.fx.Node) else None
        if isinstance(value, LocalIndex):
            self._local_index_error(node, value)
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

    def _operand(self, scope: _Scope, arg: object, node: torch.fx.Node) -> Value | float:
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

    def _emit(self, scope: _Scope, op: Op) -> Value | None:
        if isinstance(op, Elementwise):
            op = self._promoted(scope, self._outer_broadcast(scope, op))
        scope.ops.append(op)
        results = op.results()
        return results[0] if results else None

    def _promoted(self, scope: _Scope, op: Elementwise) -> Op:
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

    # ----- handlers ----------------------------------------------------------------
    def _host_tensor(self, node: torch.fx.Node, scope: _Scope) -> str:
        name = node.args[0]
        if not isinstance(name, str):
            raise TypeError(f"{node.target}: argument 0 is {name!r}, not a tensor name")
        val = node.meta["val"]
        if name not in self.tensors:
            if val.dtype in _INDEX_DTYPES:
                self.index_tensors[name] = val.dtype
            elif val.dtype not in _DTYPES:
                what = f"tensor {name} of dtype {val.dtype}"
                self._unsupported(node, what, _dtype_hint(val.dtype))
            shape = tuple(int(d) for d in val.shape)
            self.tensors[name] = TensorArg(name, shape, _DTYPES.get(val.dtype, "fp32"), "input")
        return name

    def _symnode(self, node: torch.fx.Node, scope: _Scope) -> Expr | float:
        val = node.meta["val"]
        if isinstance(val, torch.SymFloat | torch.SymInt) and (
            isinstance(val, torch.SymFloat) or self.env.get_block_id(val) is None
        ):
            origin = self.bound.host_function.expr_to_origin.get(_sympy_of(val))
            name = getattr(origin.origin, "name", "") if origin is not None else ""
            if name in self.scalars:
                return self.scalars[name]
        if isinstance(val, float):
            return val
        return self._dim(val, node)

    def _sym_size(self, node: torch.fx.Node, scope: _Scope) -> Expr:
        return self._dim(node.meta["val"], node)

    def _window(
        self, node: torch.fx.Node, tensor: str, index: Sequence[object]
    ) -> tuple[Window, ...]:
        shape = self.tensors[tensor].shape
        if len(index) != len(shape):
            self._unsupported(node, f"indexing {tensor} with {len(index)} of {len(shape)} dims")
        windows = []
        for dim, entry in zip(shape, index, strict=True):
            if isinstance(entry, slice) and entry == slice(None):
                windows.append(Window(Const(0), Const(dim)))
                continue
            bid = self._block_of(entry)
            if bid is None or bid not in self.block_begin:
                self._unsupported(node, f"index {entry} of {tensor}")
            windows.append(Window(self.block_begin[bid], self.block_exprs[bid]))
        return tuple(windows)

    def _load(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        tensor = scope.values[_node_arg(node, 0)]
        if isinstance(tensor, Value):  # `tile.index[:, None]`: a subscript of a tile value
            return self._insert_axis(node, scope, tensor, list(_seq_arg(node, 1)))
        if not isinstance(tensor, str):
            self._unsupported(node, f"a load of {tensor} (not a kernel argument)")
        if tensor in self.index_tensors:
            what = f"reading the {self.index_tensors[tensor]} tensor {tensor}"
            self._unsupported(node, what, _dtype_hint(self.index_tensors[tensor]))
        window = self._window(node, tensor, _seq_arg(node, 1))
        forwarded = self._forwarded(node, scope, tensor, window)
        if forwarded is not None:
            return forwarded
        top = scope is self.root_scope
        self.phase_loads.setdefault(tensor, []).append((self.phase, window if top else ()))
        result = self._new_value(node, f"{tensor}_tile")
        return self._emit(scope, Load(result, tensor, window, _line(node)))

    def _store(self, node: torch.fx.Node, scope: _Scope) -> None:
        tensor = self._tensor_of(scope, node)
        self.stored.add(tensor)
        window = self._window(node, tensor, _seq_arg(node, 1))
        value = self._value(scope, node.args[2], node)
        if tensor in self.index_tensors and value.name not in self.index_values:
            what = f"storing a computed value into the {self.index_tensors[tensor]} tensor {tensor}"
            self._unsupported(node, what, _dtype_hint(self.index_tensors[tensor]))
        if self.tensors[tensor].dtype == "int32":  # torch truncates a float stored there
            value = self._cast(scope, value, "int32", _line(node))
        value = self._broadcast_to(scope, value, tuple(w.size for w in window), _line(node))
        self._emit(scope, Store(tensor, window, value, _line(node)))
        read = self.phase_loads.get(tensor, [])
        if any(phase < self.phase and where != window for phase, where in read):
            raise GridBarrierNeeded(tensor)  # other blocks read these tiles before
        top = scope is self.root_scope  # a store inside a loop cannot be forwarded
        self.phase_stores[tensor] = (self.phase, window if top else (), value)

    def _outer_broadcast(self, scope: _Scope, op: Elementwise) -> Elementwise:
        """An op between a column (m, 1) and a row (1, n) (an outer broadcast, e.g. a
        `tile_m.index[:, None]` mask on a row `v[None, :]`) makes an (m, n) value that
        neither operand has; elementwise ops broadcast one operand onto the other's shape
        only, so the first is broadcast to the result's shape first."""
        values = [a for a in op.args if isinstance(a, Value)]
        full = op.result.shape
        if len(values) < 2 or any(v.rank != len(full) or v.shape == full for v in values):
            return op
        wide = self._broadcast_to(scope, values[0], full, op.line)
        return replace(op, args=tuple(wide if a is values[0] else a for a in op.args))

    def _broadcast_to(
        self, scope: _Scope, value: Value, sizes: tuple[Expr, ...], line: int
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

    def _full(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        fill = node.args[1]
        if not isinstance(fill, int | float):
            self._unsupported(node, f"a fill with {fill}", "fill with a constant")
        return self._emit(scope, Full(self._new_value(node), float(fill), _line(node)))

    def _matmul(
        self, node: torch.fx.Node, scope: _Scope, acc: object, a: object, b: object
    ) -> Value | None:
        rhs = scope.values.get(b) if isinstance(b, torch.fx.Node) else None
        transposed = isinstance(rhs, _Transposed)
        rhs_value = rhs.value if isinstance(rhs, _Transposed) else self._value(scope, b, node)
        acc_value = self._value(scope, acc, node) if acc is not None else None
        lhs_value = self._value(scope, a, node)
        if "int32" in (lhs_value.dtype, rhs_value.dtype):
            self._unsupported(
                node,
                "a matmul of int32 tiles",
                "the matrix engine multiplies bf16, fp16, fp32 and block-float tiles only; "
                "convert the operands with .float() (exact products below 2^24)",
            )
        op = Matmul(
            self._new_value(node),
            self._value(scope, a, node),
            rhs_value,
            acc_value,
            transposed,
            _line(node),
        )
        return self._emit(scope, op)

    def _addmm(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        if node.kwargs.get("alpha", 1) != 1 or node.kwargs.get("beta", 1) != 1:
            self._unsupported(node, "addmm with alpha/beta")
        return self._matmul(node, scope, node.args[0], node.args[1], node.args[2])

    def _mm(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        return self._matmul(node, scope, None, node.args[0], node.args[1])

    def _dot(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        acc = node.args[2] if len(node.args) > 2 else node.kwargs.get("acc")
        return self._matmul(node, scope, acc, node.args[0], node.args[1])

    def _permute(self, node: torch.fx.Node, scope: _Scope) -> _Transposed:
        perm = list(_seq_arg(node, 1))
        value = self._value(scope, node.args[0], node)
        swapped = list(range(len(perm)))
        swapped[-2:] = swapped[-1], swapped[-2]
        if perm != swapped:
            self._unsupported(node, f"permute {perm} (only a swap of the last two dims)")
        return _Transposed(value)

    def _transpose(self, node: torch.fx.Node, scope: _Scope) -> _Transposed:
        value = self._value(scope, node.args[0], node)
        dims = sorted(d % value.rank for d in (_int_arg(node, 1), _int_arg(node, 2)))
        if dims != [value.rank - 2, value.rank - 1]:
            self._unsupported(node, "transpose of dims other than the last two")
        return _Transposed(value)

    def _convert(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        operand = self._value(scope, node.args[0], node)
        dtype = node.meta["val"].dtype
        if operand.name in self.index_loads and dtype == torch.float32:
            return operand  # index vectors are fp32 already
        if dtype in _INDEX_DTYPES and operand.name in self.index_values:
            return operand  # indices stay exact fp32 integers
        if dtype not in _DTYPES:
            self._unsupported(node, f".to({dtype})", _dtype_hint(dtype))
        result = self._new_value(node, f"{operand.name}_{_DTYPES[node.meta['val'].dtype]}")
        return self._emit(scope, Convert(result, operand, _line(node)))

    def _elementwise(
        self, node: torch.fx.Node, scope: _Scope, op: str, args: Sequence[object]
    ) -> Value | None:
        if len(args) == 2 and (args[0] is None) != (args[1] is None):
            # Helion traces `x * x` as mul(x, None): the same tensor used twice
            args = [args[0] if args[0] is not None else args[1]] * 2
        operands = [self._operand(scope, arg, node) for arg in args]
        return self._emit(
            scope, Elementwise(self._new_value(node), op, tuple(operands), _line(node))
        )

    def _reduce(self, node: torch.fx.Node, scope: _Scope, op: str) -> Value | None:
        operand = self._value(scope, node.args[0], node)
        dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        keepdim = (
            node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
        ) or False
        dim = dims[0] if isinstance(dims, list | tuple) and len(dims) == 1 else None
        if not isinstance(dim, int) or keepdim:
            self._unsupported(node, f"{op} over {dims} (one axis, keepdim=False)")
        axis = dim % operand.rank
        return self._emit(scope, Reduce(self._new_value(node), op, operand, axis, _line(node)))

    def _subscript(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        operand = self._value(scope, node.args[0], node)
        return self._insert_axis(node, scope, operand, list(_seq_arg(node, 1)))

    def _insert_axis(
        self, node: torch.fx.Node, scope: _Scope, operand: Value, index: list[object]
    ) -> Value | None:
        if any(e is not None and e != slice(None) for e in index) or index.count(None) != 1:
            self._unsupported(node, "subscript other than inserting one axis with None")
        axis = index.index(None)
        shape = (*operand.shape[:axis], Const(1), *operand.shape[axis:])
        result = self._renamed(Value("", shape, operand.dtype), node.name)
        return self._emit(scope, ExpandDims(result, operand, axis, _line(node)))

    def _tile_begin(self, node: torch.fx.Node, scope: _Scope) -> Expr:
        return self.block_begin[self._tile_block(node)]

    def _tile_end(self, node: torch.fx.Node, scope: _Scope) -> Expr:
        bid = self._tile_block(node)
        return self.block_begin[bid] + self.block_exprs[bid]

    def _tile_id(self, node: torch.fx.Node, scope: _Scope) -> Expr:
        bid = self._tile_block(node)
        if bid not in self.block_index:
            self._unsupported(node, "tile.id of an inner loop")
        return self.block_index[bid]

    def _tile_index(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        """`tile.index`: the element indices of a tile, read from an index vector
        (`<tile>_index`, 0..extent-1 in fp32) that Loom adds as an input in DRAM."""
        bid = self._block_of(node.args[0])
        sym = self.block_exprs.get(bid) if bid is not None else None
        info = self.env.block_sizes[bid] if bid is not None else None
        if bid is None or not isinstance(sym, Sym) or info is None or bid not in self.block_begin:
            self._unsupported(node, "tile.index of a tile without a static extent")
        # a loop over another tile's range (`hl.tile(t.begin, t.end)`) indexes the
        # enclosing axis: its vector spans that axis
        extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
        name = f"{sym.name}_index"
        self.tensors.setdefault(name, TensorArg(name, (int(extent),), "fp32", "input"))
        window = (Window(self.block_begin[bid], sym),)
        result = self._renamed(Value("", (sym,), "fp32"), f"{name}_tile")
        self.index_loads[result.name] = bid
        return self._emit(scope, Load(result, name, window, _line(node)))

    def _index_column(self, bid: int, node: torch.fx.Node, scope: _Scope) -> Value | None:
        """`tile.index.unsqueeze(1)`: the indices as a column (one per row of a tile, the
        layout of a row reduction), read from a column vector `<tile>_col_index` in DRAM:
        a row-vector index cannot be turned into a column on the device."""
        sym = self.block_exprs[bid]
        info = self.env.block_sizes[bid]
        assert isinstance(sym, Sym)
        extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
        name = f"{sym.name}_col_index"
        self.tensors.setdefault(name, TensorArg(name, (int(extent), 1), "fp32", "input"))
        window = (Window(self.block_begin[bid], sym), Window(Const(0), Const(1)))
        result = self._renamed(Value("", (sym, Const(1)), "fp32"), f"{name}_tile")
        return self._emit(scope, Load(result, name, window, _line(node)))

    def _span_index(self, scope: _Scope, n: int, line: int) -> Value:
        """The element indices 0..n-1 of a full `:` slice of extent n (argmax's
        candidates), read from an index vector Loom adds as the DRAM input `span<n>_index`."""
        name = f"span{n}_index"
        self.tensors.setdefault(name, TensorArg(name, (n,), "fp32", "input"))
        result = self._renamed(Value("", (Const(n),), "fp32"), f"{name}_tile")
        self._emit(scope, Load(result, name, (Window(Const(0), Const(n)),), line))
        return result

    def _argreduce_block(self, n: Expr) -> tuple[int, int, Expr] | None:
        """(block id, extent of its dim, begin) of the inner-loop tile `n` (an argmax
        over a tile of a looped dim), or None when `n` is no tile of an entered inner
        loop (a grid tile: each block would see only its own tile of the dim)."""
        found = [
            b
            for b, e in self.block_exprs.items()
            if e == n and b in self.block_begin and not self._is_grid_block(b)
        ]
        if not found:
            return None
        bid = found[-1]
        info = self.env.block_sizes[bid]
        extent = info.size if isinstance(info.size, int) else self._enclosing_extent(bid)
        return bid, int(extent), self.block_begin[bid]

    def _tile_indices(self, scope: _Scope, bid: int, column: bool, line: int) -> Value:
        """The indices in the tensor of the elements of tile `bid`, as a row (`<tile>_index`)
        or as a column (`<tile>_col_index`), read from an index vector in DRAM."""
        sym = self.block_exprs[bid]
        assert isinstance(sym, Sym)
        info = self.env.block_sizes[bid]
        extent = int(info.size if isinstance(info.size, int) else self._enclosing_extent(bid))
        begin = Window(self.block_begin[bid], sym)
        if column:
            name = f"{sym.name}_col_index"
            shape: tuple[int, ...] = (extent, 1)
            window: tuple[Window, ...] = (begin, Window(Const(0), Const(1)))
            vshape: tuple[Expr, ...] = (sym, Const(1))
        else:
            name, shape, window, vshape = f"{sym.name}_index", (extent,), (begin,), (sym,)
        self.tensors.setdefault(name, TensorArg(name, shape, "fp32", "input"))
        result = self._renamed(Value("", vshape, "fp32"), f"{name}_tile")
        self._emit(scope, Load(result, name, window, line))
        return result

    def _local_index_error(self, node: torch.fx.Node, value: LocalIndex) -> NoReturn:
        self._unsupported(
            node,
            f"the {value.what} of a tile of a looped dim used without its tile's begin",
            f"add the tile's begin (`x[tile_m, tile_n].{value.what}(-1) + tile_n.begin`), "
            "the index in the tensor, which the running (value, index) pair of a looped "
            f"{value.what} carries",
        )

    def _plus_begin(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        """`x.argmax(-1) + tile_n.begin` over the tile of a looped dim: the index in the
        tensor, which the argmax computed already (see SurfaceOps._argreduce)."""
        a, b = (scope.values.get(v) if isinstance(v, torch.fx.Node) else v for v in node.args[:2])
        local, other = (a, b) if isinstance(a, LocalIndex) else (b, a)
        if not isinstance(local, LocalIndex):
            return None
        if not isinstance(other, Expr) or other != local.begin:
            self._unsupported(
                node,
                f"the {local.what} of a tile of a looped dim plus {other}",
                "add the begin of the tile it runs over (`+ tile_n.begin`)",
            )
        return local.value

    def _eq(self, node: torch.fx.Node, scope: _Scope) -> Cond:
        lhs, rhs = (
            scope.values.get(a, a) if isinstance(a, torch.fx.Node) else a for a in node.args
        )
        if not isinstance(lhs, Expr | int) or not isinstance(rhs, Expr | int):
            self._unsupported(node, f"`==` between {lhs} and {rhs}", "compare tile ids")
        return cmp("==", as_expr(lhs), as_expr(rhs))

    def _gather(self, node: torch.fx.Node, scope: _Scope) -> Value | None:
        bid = self._block_of(node.args[0])
        sym = self.block_exprs.get(bid) if bid is not None else None
        if bid not in self.block_index or not isinstance(sym, Sym):
            self._unsupported(node, "gather over a tile that is not a grid axis")
        operand = self._value(scope, node.args[1], node)
        op = Gather(self._new_value(node), operand, sym.name, _line(node))
        return self._emit(scope, op)

    def _atomic_add(self, node: torch.fx.Node, scope: _Scope) -> None:
        """`hl.atomic_add(out, [tile_m, tile_n], part)` into a zero-initialised `out`: the
        blocks along the one grid axis missing from the index (split-K) each add a
        partial, so Loom gathers the partials to the block with index 0 on that axis,
        which sums them and stores the tile (a split reduction; no DRAM atomics)."""
        tensor = scope.values[_node_arg(node, 0)]
        index = list(_seq_arg(node, 1))
        value = self._operand(scope, node.args[2], node)
        line = _line(node)
        if not isinstance(tensor, str) or not isinstance(value, Value):
            self._unsupported(node, "hl.atomic_add of a constant or into a tile value")
        assert isinstance(tensor, str) and isinstance(value, Value)
        if not self._zero_initialised(tensor):
            self._unsupported(
                node,
                f"hl.atomic_add into {tensor}, which the kernel does not create with torch.zeros",
                f"create {tensor} inside the kernel with torch.zeros/zeros_like/new_zeros "
                "(Loom stores the sum of the partials, so the tensor must start at zero)",
            )
        used = {self._block_of(e) for e in index}
        split = [b for b in self.device_ir.grid_block_ids[0] if b not in used]
        if len(split) > 1:
            self._unsupported(
                node,
                "hl.atomic_add from blocks split along several grid axes",
                "index the output with every grid axis but one (the split-K axis)",
            )
        window = self._window(node, tensor, index)
        self.stored.add(tensor)
        dtype = self.tensors[tensor].dtype
        if not split:  # every block owns its tile: the add into zeros is a store
            self._emit(scope, Store(tensor, window, self._cast(scope, value, dtype, line), line))
            return
        bid = split[0]
        tile = self.block_exprs[bid]
        assert isinstance(tile, Sym)
        parts = Value("", (self._num_tiles(bid), *value.shape), value.dtype)
        parts = self._renamed(parts, f"{value.name}_parts")
        self._emit(scope, Gather(parts, value, tile.name, line))
        guard = _Scope()
        total = self._renamed(value, f"{value.name}_total")
        self._emit(guard, Reduce(total, "sum", parts, 0, line))
        stored = self._cast(guard, total, dtype, line)
        self._emit(guard, Store(tensor, window, stored, line))
        owner = cmp("==", self.block_index[bid], Const(0))
        scope.ops.append(If(owner, tuple(guard.ops), line))

    def _cast(self, scope: _Scope, value: Value, dtype: str, line: int) -> Value:
        if value.dtype == dtype:
            return value
        result = self._renamed(Value("", value.shape, dtype), f"{value.name}_{dtype}")
        self._emit(scope, Convert(result, value, line))
        return result

    def _zero_initialised(self, tensor: str) -> bool:
        """Whether the kernel's host code creates `tensor` with a zero fill."""
        tree = self._kernel_ast
        if tree is None:
            return False
        zeros = {"zeros", "zeros_like", "new_zeros"}
        for stmt in ast.walk(tree):
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == tensor for t in stmt.targets)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Attribute)
                and stmt.value.func.attr in zeros
            ):
                return True
        return False

    def _getitem(self, node: torch.fx.Node, scope: _Scope) -> object:
        container = scope.values[_node_arg(node, 0)]
        if not isinstance(container, list | tuple):
            self._unsupported(node, "indexing a non-loop result")
        return container[_int_arg(node, 1)]

    def _phi(self, node: torch.fx.Node, scope: _Scope) -> object:
        return scope.values[_node_arg(node, 1)]

    def _for_loop(self, node: torch.fx.Node, scope: _Scope) -> list[Value]:
        graph_id = _int_arg(node, 0)
        begins, ends, args = _seq_arg(node, 1), _seq_arg(node, 2), _seq_arg(node, 3)
        info = self.device_ir.graphs[graph_id]
        assert isinstance(info, ForLoopGraphInfo)
        if len(info.block_ids) != 1:
            self._unsupported(node, "a multi-dimensional inner hl.tile loop")
        bid = info.block_ids[0]
        tile = self.block_exprs.get(bid)
        if not isinstance(tile, Sym):
            self._unsupported(node, "an inner loop without a named tile")
        begin = self._bound(scope, begins[0])
        end = self._bound(scope, ends[0])
        index = Sym(f"{tile.name}_id", 0, max(tile.upper - 1, 0), 1, "index")
        self.block_index[bid] = index
        self.block_begin[bid] = begin + index * tile
        carried_pos = self._carried_positions(node)
        inputs: list[object] = []
        iter_args: dict[int, Value] = {}
        for pos, arg in enumerate(args):
            init = scope.values[_as_node(arg)]
            if pos in carried_pos:
                assert isinstance(init, Value)
                iter_args[pos] = self._renamed(init, f"{init.name}_iter")
                inputs.append(iter_args[pos])
            else:
                inputs.append(init)
        body = _Scope()
        outputs = self._convert_graph(info, body, inputs)
        assert isinstance(outputs, list)
        carried: list[Carried] = []
        results: list[Value | None] = [None] * len(outputs)
        for pos, out_index in sorted(carried_pos.items(), key=lambda kv: kv[1]):
            init = scope.values[_as_node(args[pos])]
            nxt = outputs[out_index]
            assert isinstance(init, Value)  # a carried position holds a tile (checked above)
            if isinstance(nxt, LocalIndex):
                self._local_index_error(node, nxt)
            if not isinstance(nxt, Value):
                self._unsupported(node, f"a loop-carried value updated to {nxt}", "carry a tile")
            result = self._renamed(init, f"{init.name}_final")
            if init.name in self.index_values and nxt.name in self.index_values:
                self.index_values.update((iter_args[pos].name, result.name))
            carried.append(Carried(init, iter_args[pos], nxt, result))
            results[out_index] = result
        loop_op = ForLoop(tile, index, begin, end, tuple(body.ops), tuple(carried), _line(node))
        scope.ops.append(loop_op)
        # outputs that are not carried values are never read (Helion's loop results are
        # the carried values only); the list keeps the FX output positions
        return cast("list[Value]", results)

    def _carried_positions(self, loop_node: torch.fx.Node) -> dict[int, int]:
        """Input position of each carried value -> its output index (read from `_phi`)."""
        args = list(_seq_arg(loop_node, 3))
        found: dict[int, int] = {}
        for user in loop_node.users:
            if user.target is not operator.getitem:
                continue
            for phi in user.users:
                if phi.target is _tracing_ops._phi:
                    found[args.index(phi.args[0])] = _int_arg(user, 1)
        return found

    def _renamed(self, value: Value, name: str) -> Value:
        unique, k = name, 0
        while unique in self.used_names:
            k += 1
            unique = f"{name}_{k}"
        self.used_names.add(unique)
        return Value(unique, value.shape, value.dtype)

    def _bound(self, scope: _Scope, arg: object) -> Expr:
        if isinstance(arg, torch.fx.Node):
            value = scope.values.get(arg)
            if isinstance(value, Expr):
                return value
            return self._dim(arg.meta["val"], arg)
        if not isinstance(arg, int):
            raise TypeError(f"loop bound {arg!r} is neither an FX node nor an integer")
        return as_expr(arg)

    def _if(self, node: torch.fx.Node, scope: _Scope) -> None:
        cond = scope.values[_node_arg(node, 0)]
        info = self.device_ir.graphs[_int_arg(node, 1)]
        assert isinstance(info, IfGraphInfo)
        if not isinstance(cond, Cond):
            self._unsupported(node, "an `if` on a tensor value")
        inputs = [scope.values[_as_node(a)] for a in _seq_arg(node, 3)]
        body = _Scope()
        self._convert_graph(info, body, inputs)
        scope.ops.append(If(cond, tuple(body.ops), _line(node)))


def _without_unused_index_loads(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    """Drop the `tile.index` loads nothing reads (the row vector of a `tile.index` taken
    as a column, `tile.index.unsqueeze(1)`, which reads its own column vector)."""
    used = {v.name for op in walk(ops) for v in op.operands()}
    used |= {c.next.name for op in walk(ops) if isinstance(op, ForLoop) for c in op.carried}

    def keep(block: tuple[Op, ...]) -> tuple[Op, ...]:
        out: list[Op] = []
        for op in block:
            if isinstance(op, Load) and op.tensor.endswith("_index"):
                if op.result.name not in used:
                    continue
            elif isinstance(op, ForLoop | If):
                op = dataclasses.replace(op, body=keep(op.body))
            out.append(op)
        return tuple(out)

    return keep(ops)
