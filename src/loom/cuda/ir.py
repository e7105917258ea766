"""The affine CUDA subset as typed values: what the parser produces and TilePlan reads.

Indices and guards are integer affine forms over named variables: the thread's global
coordinates (`thread.y`, `thread.x`), host loop variables (`t`) and reduction loop
variables (`k`). Values are trees of loads from rank-2 arrays, float literals, scalar
kernel parameters and the four arithmetic operators; a reduction loop becomes `Sum`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

THREAD_Y = "thread.y"
THREAD_X = "thread.x"


@dataclass(frozen=True, slots=True)
class Affine:
    """sum(coef * var) + const, with terms sorted by name and no zero coefficient."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def var(name: str) -> Affine:
        return Affine(((name, 1),), 0)

    @staticmethod
    def num(value: int) -> Affine:
        return Affine((), value)

    def coef(self, name: str) -> int:
        return dict(self.terms).get(name, 0)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(n for n, _ in self.terms)

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __add__(self, other: Affine) -> Affine:
        acc = dict(self.terms)
        for n, c in other.terms:
            acc[n] = acc.get(n, 0) + c
        return Affine(tuple(sorted((n, c) for n, c in acc.items() if c)), self.const + other.const)

    def scale(self, k: int) -> Affine:
        if k == 0:
            return Affine()
        return Affine(tuple((n, c * k) for n, c in self.terms), self.const * k)

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scale(-1)

    def without(self, name: str) -> Affine:
        return Affine(tuple((n, c) for n, c in self.terms if n != name), self.const)

    def subs(self, mapping: Mapping[str, Affine]) -> Affine:
        out = Affine((), self.const)
        for n, c in self.terms:
            out = out + (mapping[n].scale(c) if n in mapping else Affine(((n, c),)))
        return out

    def eval(self, env: Mapping[str, int]) -> int:
        return self.const + sum(c * env[n] for n, c in self.terms)

    def __str__(self) -> str:
        parts: list[str] = []
        for n, c in self.terms:
            sign = "-" if c < 0 else "+"
            mag = abs(c)
            body = n if mag == 1 else f"{mag}*{n}"
            parts.append(f"{sign} {body}" if parts else (f"-{body}" if c < 0 else body))
        if self.const or not parts:
            if parts:
                parts.append(f"{'-' if self.const < 0 else '+'} {abs(self.const)}")
            else:
                parts.append(str(self.const))
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Constraint:
    """`expr >= 0` (op "ge") or `expr == 0` (op "eq")."""

    expr: Affine
    op: str

    def holds(self, env: Mapping[str, int]) -> bool:
        v = self.expr.eval(env)
        return v >= 0 if self.op == "ge" else v == 0

    def __str__(self) -> str:
        return f"{self.expr} {'>=' if self.op == 'ge' else '=='} 0"


@dataclass(frozen=True, slots=True)
class Value:
    """Base class of value trees."""


@dataclass(frozen=True, slots=True)
class Load(Value):
    array: str
    row: Affine
    col: Affine


@dataclass(frozen=True, slots=True)
class Num(Value):
    value: float


@dataclass(frozen=True, slots=True)
class Param(Value):
    """A scalar kernel parameter, bound to a number at each launch."""

    name: str


@dataclass(frozen=True, slots=True)
class Bin(Value):
    op: str  # add | sub | mul | div
    lhs: Value
    rhs: Value


@dataclass(frozen=True, slots=True)
class Sum(Value):
    """sum over var in [0, extent) of body (a reduction loop of `+=` statements)."""

    var: str
    extent: int
    body: Value


@dataclass(frozen=True, slots=True)
class Update:
    """array[row][col] = value for every thread whose guard holds."""

    array: str
    row: Affine
    col: Affine
    value: Value
    guard: tuple[Constraint, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Kernel:
    name: str
    arrays: tuple[str, ...]
    """Pointer parameters, in order."""
    scalars: tuple[str, ...]
    """Scalar (int or float) parameters, in order."""
    params: tuple[str, ...]
    """All parameters in declaration order."""
    updates: tuple[Update, ...]
    line: int


@dataclass(frozen=True, slots=True)
class ArrayDecl:
    name: str
    rows: int
    cols: int


@dataclass(frozen=True, slots=True)
class Launch:
    """kernel<<<grid, block>>>(args): grid and block as (y, x); args are host array
    names, numbers, or affine forms of the host loop variable."""

    kernel: str
    grid: tuple[int, int]
    block: tuple[int, int]
    args: tuple[str | float | Affine, ...]
    line: int


@dataclass(frozen=True, slots=True)
class TimeLoop:
    """for (var = lo; var < hi; var++) { launches } on the host."""

    var: str
    lo: int
    hi: int
    launches: tuple[Launch, ...]
    line: int


@dataclass(frozen=True, slots=True)
class CudaProgram:
    path: str
    kernels: tuple[Kernel, ...]
    host: str
    arrays: tuple[ArrayDecl, ...]
    body: tuple[Launch | TimeLoop, ...]
    defines: tuple[tuple[str, str], ...]

    def kernel(self, name: str) -> Kernel:
        return next(k for k in self.kernels if k.name == name)

    def array(self, name: str) -> ArrayDecl:
        return next(a for a in self.arrays if a.name == name)

    def launches(self) -> tuple[tuple[Launch, dict[str, int]], ...]:
        """Every launch in host order with the host loop variables bound."""
        out: list[tuple[Launch, dict[str, int]]] = []
        for item in self.body:
            if isinstance(item, Launch):
                out.append((item, {}))
            else:
                for v in range(item.lo, item.hi):
                    out.extend((la, {item.var: v}) for la in item.launches)
        return tuple(out)
