"""1-D tensors as one-tile-high rows or one-tile-wide columns of the 2-D tile grid.

Loom stores every DRAM tensor as a grid of 32x32 tiles, so a 1-D tensor needs a second
dim. Its orientation follows how it is used: a row reduction's result (one value per
row of a tile, held in column 0) is written as a column `(n, 1)`, and so is a vector read
as `s[tile_m][:, None]` (a per-row scale, `tile_m.index[:, None]`); every other 1-D tensor
(elementwise data, a vector loaded to scale columns) is a row `(1, n)`.
Values keep their 1-D shapes; only the tensor and its access windows gain the unit dim.
"""

from __future__ import annotations

from dataclasses import replace

from loom.ir.tile import (
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    If,
    Load,
    Op,
    Reduce,
    Store,
    TensorArg,
    TileProgram,
    Value,
    Window,
    walk,
)
from loom.symbolic import Const


def _vectors(ops: tuple[Op, ...]) -> set[str]:
    """Names of values that hold one number per tile row (results of row reductions and
    elementwise/convert chains of the same shape over them)."""
    found: set[str] = set()
    for op in (*walk(ops), *walk(ops)):  # twice: loop results follow their bodies
        match op:
            case ForLoop(carried=carried):
                for c in carried:
                    if c.next.name in found:
                        found.update((c.init.name, c.arg.name, c.result.name))
            case Reduce(result=r, operand=x, axis=axis) if axis == x.rank - 1 and x.rank >= 2:
                found.add(r.name)
            case Convert(result=r, operand=x) if x.name in found:
                found.add(r.name)
            case Elementwise(result=r, args=args) if any(
                isinstance(a, Value) and a.name in found and a.shape == r.shape for a in args
            ):
                found.add(r.name)
            case _:
                pass
    return found


def _orientations(program: TileProgram) -> dict[str, str]:
    vectors = _vectors(program.body)
    sides: dict[str, str] = {}
    for arg in program.args:
        if len(arg.shape) == 1:
            sides[arg.name] = "row"
    loaded = _loaded_from(program.body, set(sides))
    for op in walk(program.body):
        if isinstance(op, Store) and op.tensor in sides and op.value.name in vectors:
            sides[op.tensor] = "column"
        elif isinstance(op, ExpandDims) and op.axis == op.result.rank - 1:
            for tensor in loaded.get(op.operand.name, ()):  # `s[tile_m][:, None]`
                sides[tensor] = "column"
    return sides


def _loaded_from(ops: tuple[Op, ...], tensors: set[str]) -> dict[str, set[str]]:
    """1-D values -> the 1-D tensors they are loaded or computed from elementwise
    (`s[tile_m].float() * 2.0` comes from `s`)."""
    found: dict[str, set[str]] = {}
    for op in walk(ops):
        match op:
            case Load(result=r, tensor=t) if t in tensors:
                found[r.name] = {t}
            case Convert(result=r, operand=x) if x.name in found:
                found[r.name] = set(found[x.name])
            case Elementwise(result=r, args=args) if r.rank == 1:
                sources = [found[a.name] for a in args if isinstance(a, Value) and a.name in found]
                if sources:
                    found[r.name] = set().union(*sources)
            case _:
                pass
    return found


def _window(window: tuple[Window, ...], side: str) -> tuple[Window, ...]:
    unit = Window(Const(0), Const(1))
    return (unit, *window) if side == "row" else (*window, unit)


def _rewrite(ops: tuple[Op, ...], sides: dict[str, str]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Load | Store) and op.tensor in sides:
            op = replace(op, window=_window(op.window, sides[op.tensor]))
        elif isinstance(op, ForLoop | If):
            op = replace(op, body=_rewrite(op.body, sides))
        out.append(op)
    return tuple(out)


def lift_1d_tensors(program: TileProgram) -> TileProgram:
    sides = _orientations(program)
    if not sides:
        return program

    def lifted(arg: TensorArg) -> TensorArg:
        side = sides.get(arg.name)
        if side is None:
            return arg
        shape = (1, *arg.shape) if side == "row" else (*arg.shape, 1)
        return replace(arg, shape=shape)

    notes = tuple(
        f"1-D tensor {name} is stored as a {side}" for name, side in sorted(sides.items())
    )
    return replace(
        program,
        args=tuple(lifted(a) for a in program.args),
        body=_rewrite(program.body, sides),
        notes=program.notes + notes,
    )
