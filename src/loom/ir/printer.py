"""Print a TileProgram as MLIR in generic form (stage-00 artifact).

Symbols become `loom.sym` ops named after the source (`%tile_m`), the grid and inner
loops become ops with regions whose block arguments are the tile indices, and symbolic
offsets, sizes and trip counts are kept as expression strings in attributes. The text is
valid generic-form MLIR: an MLIR parser that allows unregistered dialects accepts it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Gather,
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
)
from loom.symbolic import Const, Expr, Sym

_MLIR_DTYPE = {
    "bf16": "bf16", "fp16": "f16", "fp32": "f32", "bfp8": "i8", "bfp4": "i4", "int32": "i32",
}  # fmt: skip


def _str_attr(text: object) -> str:
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _float_attr(value: float) -> str:
    if math.isfinite(value):
        return f"{value!r} : f64"
    return _str_attr(value)


def _dims(shape: Iterable[Expr | int]) -> str:
    return "x".join(str(d.value) if isinstance(d, Const) else "?" for d in map(_as_expr, shape))


def _as_expr(d: Expr | int) -> Expr:
    return d if isinstance(d, Expr) else Const(d)


def tensor_type(value: Value) -> str:
    dims = _dims(value.shape)
    return f"tensor<{dims + 'x' if dims else ''}{_MLIR_DTYPE[value.dtype]}>"


def memref_type(arg: TensorArg) -> str:
    return f"memref<{'x'.join(map(str, arg.shape))}x{_MLIR_DTYPE[arg.dtype]}>"


def _shape_attr(value: Value) -> str:
    return "[" + ", ".join(_str_attr(d) for d in value.shape) + "]"


def _window_attrs(window: tuple[Window, ...]) -> str:
    offsets = ", ".join(_str_attr(w.offset) for w in window)
    sizes = ", ".join(_str_attr(w.size) for w in window)
    return f"offsets = [{offsets}], sizes = [{sizes}]"


def sym_decl(sym: Sym) -> str:
    return (
        f'%{sym.name} = "loom.sym"() {{symbol_ref = @{sym.name}, kind = {_str_attr(sym.kind)}, '
        f"lower_bound = {sym.lower} : index, upper_bound = {sym.upper} : index, "
        f"alignment = {sym.align} : index}} : () -> index"
    )


class TilePrinter:
    """Prints one TileProgram; keeps the tensor-argument types for operand lists."""

    def __init__(self, program: TileProgram) -> None:
        self.program = program
        self.arg_types = {a.name: memref_type(a) for a in program.args}
        self.lines: list[str] = []
        self.depth = 0

    def emit(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def print(self) -> str:
        p = self.program
        arg_list = ", ".join(f"%{a.name}: {memref_type(a)}" for a in p.args)
        fn_type = f"({', '.join(memref_type(a) for a in p.args)}) -> ()"
        self.emit(f"// Loom TileProgram of kernel {p.name} ({p.source_file})")
        self.emit('"builtin.module"() ({')
        self.depth += 1
        self.emit(
            f'"func.func"() <{{function_type = {fn_type}, sym_name = {_str_attr(p.name)}}}> ({{'
        )
        self.emit(f"^bb0({arg_list}):")
        self.depth += 1
        for sym in p.tile_syms:
            self.emit(sym_decl(sym))
        grid_args = ", ".join(f"%{a.index.name}: index" for a in p.grid)
        self.emit('"loom.grid"() ({')
        self.emit(f"^bb0({grid_args}):")
        self.depth += 1
        self.ops(p.body)
        self.emit('"loom.yield"() : () -> ()')
        self.depth -= 1
        tiles = ", ".join(f"@{a.tile.name}" for a in p.grid)
        extents = ", ".join(f"{a.extent} : index" for a in p.grid)
        counts = ", ".join(_str_attr(a.num_tiles) for a in p.grid)
        self.emit(
            f"}}) {{tiles = [{tiles}], extents = [{extents}], num_tiles = [{counts}]}} : () -> ()"
        )
        self.emit('"func.return"() : () -> ()')
        self.depth -= 1
        self.emit("}) : () -> ()")
        self.depth -= 1
        self.emit("}) : () -> ()")
        return "\n".join(self.lines) + "\n"

    def ops(self, ops: tuple[Op, ...]) -> None:
        for op in ops:
            self.op(op)

    def op(self, op: Op) -> None:
        match op:
            case Load(result=r, tensor=t, window=w):
                self.emit(
                    f'%{r.name} = "loom.load"(%{t}) {{{_window_attrs(w)}}} : '
                    f"({self.arg_types[t]}) -> {tensor_type(r)}"
                )
            case Store(tensor=t, window=w, value=v):
                self.emit(
                    f'"loom.store"(%{v.name}, %{t}) {{{_window_attrs(w)}}} : '
                    f"({tensor_type(v)}, {self.arg_types[t]}) -> ()"
                )
            case Full(result=r, fill=f):
                self.emit(
                    f'%{r.name} = "loom.full"() '
                    f"{{value = {_float_attr(f)}, shape = {_shape_attr(r)}}}"
                    f" : () -> {tensor_type(r)}"
                )
            case Matmul(result=r, lhs=a, rhs=b, acc=acc, rhs_transposed=tr):
                operands = [a, b] + ([acc] if acc is not None else [])
                attrs = f"rhs_transposed = {str(tr).lower()}"
                if op.lhs_transposed:
                    attrs = f"lhs_transposed = true, {attrs}"
                self.simple("loom.matmul", r, operands, attrs)
            case Elementwise(result=r, op=kind, args=args):
                values = [a for a in args if isinstance(a, Value)]
                scalars = [f"{_float_attr(a)}" for a in args if not isinstance(a, Value)]
                positions = [str(i) for i, a in enumerate(args) if not isinstance(a, Value)]
                attrs = f"fn = {_str_attr(kind)}"
                if scalars:
                    attrs += (
                        f", scalars = [{', '.join(scalars)}], "
                        f"scalar_positions = [{', '.join(positions)}]"
                    )
                self.simple("loom.elementwise", r, values, attrs)
            case Reduce(result=r, op=kind, operand=x, axis=axis):
                self.simple("loom.reduce", r, [x], f"fn = {_str_attr(kind)}, axis = {axis} : i64")
            case ExpandDims(result=r, operand=x, axis=axis):
                self.simple("loom.expand_dims", r, [x], f"axis = {axis} : i64")
            case Convert(result=r, operand=x):
                self.simple("loom.convert", r, [x], "")
            case Gather(result=r, operand=x, across=across):
                self.simple("loom.gather", r, [x], f"across = @{across}")
            case ForLoop():
                self.for_loop(op)
            case If(cond=cond, body=body):
                self.emit('"loom.if"() ({')
                self.depth += 1
                self.ops(body)
                self.emit('"loom.yield"() : () -> ()')
                self.depth -= 1
                self.emit(f"}}) {{cond = {_str_attr(cond)}}} : () -> ()")
            case _:
                raise TypeError(f"cannot print {type(op).__name__}")

    def simple(self, name: str, result: Value, operands: list[Value], attrs: str) -> None:
        names = ", ".join(f"%{v.name}" for v in operands)
        types = ", ".join(tensor_type(v) for v in operands)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.emit(
            f'%{result.name} = "{name}"({names}){attr_text} : ({types}) -> {tensor_type(result)}'
        )

    def for_loop(self, op: ForLoop) -> None:
        inits = [c.init for c in op.carried]
        results = [c.result for c in op.carried]
        lhs = f"{', '.join('%' + r.name for r in results)} = " if results else ""
        block_args = [f"%{op.index.name}: index"] + [
            f"%{c.arg.name}: {tensor_type(c.arg)}" for c in op.carried
        ]
        self.emit(f'{lhs}"loom.for"({", ".join("%" + v.name for v in inits)}) ({{')
        self.emit(f"^bb0({', '.join(block_args)}):")
        self.depth += 1
        self.ops(op.body)
        yielded = [c.next for c in op.carried]
        self.emit(
            f'"loom.yield"({", ".join("%" + v.name for v in yielded)}) : '
            f"({', '.join(tensor_type(v) for v in yielded)}) -> ()"
        )
        self.depth -= 1
        attrs = (
            f"tile = @{op.tile.name}, begin = {_str_attr(op.begin)}, end = {_str_attr(op.end)}, "
            f"trip_count = {_str_attr(op.trip_count)}"
        )
        in_types = ", ".join(tensor_type(v) for v in inits)
        out_types = ", ".join(tensor_type(v) for v in results)
        self.emit(f"}}) {{{attrs}}} : ({in_types}) -> ({out_types})")


def print_tile_program(program: TileProgram) -> str:
    return TilePrinter(program).print()
