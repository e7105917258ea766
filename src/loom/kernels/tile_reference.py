"""Loom's own reference: a kernel's Tile IR evaluated eagerly in torch.

Helion's interpret mode runs a kernel op by op in CPU torch, but not every op has a CPU
kernel: the standard matmul idiom `torch.addmm(fp32_acc, bf16, bf16)` calls
`aten::mm.dtype`, which has none. Where it cannot run, verification evaluates the
kernel's own TileProgram instead, in fp32 (or fp64 when asked).

Every tile symbol takes the largest value of its domain that divides its upper bound
(the extent it tiles, so most grids and loops run once, over whole tensors); the grid
and the loops are walked in order, the launches of a kernel one after the other with
DRAM persisting, and each op is the torch op of the same meaning. Values are held in the
compute dtype, int32 values as int32 (integer arithmetic wraps as on the device); an
explicit conversion to bf16 or fp16 rounds as the kernel does, one to fp32 keeps the
compute precision, and stores do not round (the reference is not rounded to the output
format).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import torch

from loom.errors import VerificationError
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
    TileProgram,
    Value,
    Window,
    walk,
)
from loom.symbolic import Expr, Sym

PRECISIONS = {"fp32": torch.float32, "fp64": torch.float64}
NARROW = {"bf16": torch.bfloat16, "fp16": torch.float16}
"""Formats an explicit conversion rounds to (wider ones keep the compute precision)."""

_UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "exp": torch.exp,
    "exp2": torch.exp2,
    "log": torch.log,
    "recip": torch.reciprocal,
    "neg": torch.neg,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "abs": torch.abs,
    "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
}
_BINARY: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "gt": torch.gt,
    "lt": torch.lt,
}


@dataclass(frozen=True)
class TileIRReference:
    """Loom's Tile IR reference chosen as a kernel's reference (`--reference tile-ir`):
    it needs the kernel's TileProgram, so verification evaluates it instead of calling
    it with the arguments."""

    precision: str = "fp32"

    def describe(self, kernel: str, reason: str = "") -> str:
        """Which reference ran, in words (`reason`: why Helion's interpret mode did not)."""
        why = f"; Helion's interpret mode cannot run it on the CPU: {reason}" if reason else ""
        return f"Loom's Tile IR reference ({self.precision} torch evaluation of {kernel}{why})"


def evaluate(
    launches: Sequence[TileProgram], inputs: Mapping[str, torch.Tensor], precision: str = "fp32"
) -> dict[str, torch.Tensor]:
    """Every tensor the launches store, by name, computed from `inputs` (the tensors they
    read before storing them, by name, in the program's shapes) in `precision` (`fp32` or
    `fp64`); the launches run in order, DRAM persisting between them."""
    compute = PRECISIONS[precision]
    dram = {name: t.to(_holding(t.dtype, compute)) for name, t in inputs.items()}
    written: list[str] = []
    for launch in launches:
        for arg in launch.args:
            if arg.role == "output":
                written.append(arg.name)
                if arg.name not in dram:
                    dram[arg.name] = torch.zeros(arg.shape, dtype=_holding(arg.dtype, compute))
            elif arg.name not in dram:
                raise VerificationError(
                    f"Loom's Tile IR reference of kernel {launch.name!r} has no tensor "
                    f"{arg.name!r} to read; pass every input the program reads."
                )
        _Launch(launch, dram, compute).run()
    return {name: dram[name] for name in dict.fromkeys(written)}


def _holding(dtype: str | torch.dtype, compute: torch.dtype) -> torch.dtype:
    """The torch dtype a value of `dtype` is held in: int32 as int32, the rest in the
    compute dtype."""
    return torch.int32 if dtype in ("int32", torch.int32) else compute


def _tile_value(sym: Sym) -> int:
    """The largest value of the symbol's domain dividing its upper bound (whole tiles)."""
    domain = sym.domain()
    return next((v for v in reversed(domain) if v > 0 and sym.upper % v == 0), domain[-1])


def _tile_syms(program: TileProgram) -> list[Sym]:
    """Every tile symbol the program's grid, loops, windows and value shapes name."""
    exprs: list[Expr] = []
    for op in walk(program.body):
        if isinstance(op, Load | Store):
            exprs += [e for w in op.window for e in (w.offset, w.size)]
        exprs += [d for v in (*op.operands(), *op.results()) for d in v.shape]
    found = {s.name: s for s in program.tile_syms}
    for e in exprs:
        found.update({s.name: s for s in e.free_syms() if s.kind == "tile"})
    return list(found.values())


class _Launch:
    """One launch: its grid walked block by block, each block's ops in order."""

    def __init__(self, program: TileProgram, dram: dict[str, torch.Tensor], compute: torch.dtype):
        self.program = program
        self.dram = dram
        self.compute = compute
        self.env: dict[str, int] = {s.name: _tile_value(s) for s in _tile_syms(program)}
        self.values: dict[str, torch.Tensor] = {}

    def run(self) -> None:
        counts = [math.ceil(a.extent / self.env[a.tile.name]) for a in self.program.grid]
        for block in itertools.product(*(range(n) for n in counts)):
            for axis, i in zip(self.program.grid, block, strict=True):
                self.env[axis.index.name] = i
            self.values = {}
            self.ops(self.program.body)

    def ops(self, ops: tuple[Op, ...]) -> None:
        for op in ops:
            self.op(op)

    def op(self, op: Op) -> None:
        match op:
            case Load(result=r, tensor=name, window=window):
                tile = self.dram[name][self.slices(name, window, op.line)]
                self.set(r, tile.reshape(self.shape(r)))
            case Store(tensor=name, window=window, value=v):
                target = self.dram[name]
                where = self.slices(name, window, op.line)
                target[where] = self.get(v).reshape(target[where].shape).to(target.dtype)
            case Full(result=r, fill=fill):
                self.set(r, torch.full(self.shape(r), fill, dtype=self.compute))
            case Matmul(result=r, lhs=a, rhs=b, acc=acc, rhs_transposed=transposed):
                lhs, rhs = self.get(a).to(self.compute), self.get(b).to(self.compute)
                lhs = lhs.transpose(-1, -2) if op.lhs_transposed else lhs
                product = lhs @ (rhs.transpose(-1, -2) if transposed else rhs)
                self.set(r, product if acc is None else self.get(acc) + product)
            case Elementwise(result=r, op=name, args=args):
                self.set(r, self.elementwise(name, args, r))
            case Reduce(result=r, op=name, operand=v, axis=axis):
                x = self.get(v)
                self.set(r, x.sum(axis) if name == "sum" else x.amax(axis))
            case ExpandDims(result=r, operand=v, axis=axis):
                self.set(r, self.get(v).unsqueeze(axis))
            case Convert(result=r, operand=v):
                x = self.get(v)
                if r.dtype in NARROW:
                    x = x.to(NARROW[r.dtype])  # rounds as the kernel's .to() does
                self.set(r, x)
            case Gather(result=r, operand=v, across=tile):
                self.gather(r, v, tile, op.line)
            case ForLoop():
                self.loop(op)
            case If(cond=cond, body=body):
                if cond.eval(self.env):
                    self.ops(body)
            case _:
                raise VerificationError(
                    f"Loom's Tile IR reference cannot evaluate {type(op).__name__} in kernel "
                    f"{self.program.name!r}; give the kernel a reference function."
                )

    def elementwise(
        self, name: str, args: tuple[Value | float, ...], result: Value
    ) -> torch.Tensor:
        operands = [self.get(a) if isinstance(a, Value) else a for a in args]
        if result.dtype != "int32":  # float arithmetic on int32 operands converts them
            operands = [x.to(self.compute) if isinstance(x, torch.Tensor) else x for x in operands]
        if name in _UNARY:
            (x,) = operands
            assert isinstance(x, torch.Tensor), f"{name} of a constant"
            return _UNARY[name](x)
        a, b = (
            x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=self.compute)
            for x in operands
        )
        out = _BINARY[name](a, b)
        return out.to(self.compute) if name in ("gt", "lt") else out

    def gather(self, result: Value, operand: Value, tile: str, line: int) -> None:
        axis = self.program.grid_axis(tile)
        if math.ceil(axis.extent / self.env[tile]) != 1:
            raise VerificationError(
                f"{self.where(line)}: Loom's Tile IR reference evaluates a split reduction "
                f"only with one block along {tile} (its tile is fixed smaller than the "
                "extent); give the kernel a reference function."
            )
        self.set(result, self.get(operand).unsqueeze(0))

    def loop(self, loop: ForLoop) -> None:
        begin, end = loop.begin.eval(self.env), loop.end.eval(self.env)
        trips = max(0, math.ceil((end - begin) / self.env[loop.tile.name]))
        state = [self.get(c.init) for c in loop.carried]
        for i in range(trips):
            self.env[loop.index.name] = i
            for c, value in zip(loop.carried, state, strict=True):
                self.values[c.arg.name] = value
            self.ops(loop.body)
            state = [self.get(c.next) for c in loop.carried]
        for c, value in zip(loop.carried, state, strict=True):
            self.values[c.result.name] = value

    def slices(self, name: str, window: tuple[Window, ...], line: int) -> tuple[slice, ...]:
        shape = self.dram[name].shape
        out = []
        for dim, w in zip(shape, window, strict=True):
            lo = w.offset.eval(self.env)
            hi = lo + w.size.eval(self.env)
            if lo < 0 or hi > dim:
                raise VerificationError(
                    f"{self.where(line)}: Loom's Tile IR reference reads or writes "
                    f"{name}[{lo}:{hi}] beyond its extent {dim} (a partial tile); give the "
                    "kernel a reference function."
                )
            out.append(slice(lo, hi))
        return tuple(out)

    def shape(self, value: Value) -> tuple[int, ...]:
        return tuple(d.eval(self.env) for d in value.shape)

    def get(self, value: Value) -> torch.Tensor:
        return self.values[value.name]

    def set(self, value: Value, tensor: torch.Tensor) -> None:
        self.values[value.name] = tensor.to(_holding(value.dtype, self.compute))

    def where(self, line: int) -> str:
        source = self.program.source_file or self.program.name
        return f"{source}:{line}" if line else source
