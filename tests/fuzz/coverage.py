"""Which constructs of docs/helion-surface.md a fuzzed program uses, by the docs' names.

benchmarks/fuzz.py counts them over a campaign (the generator's coverage table, printed
from its summary.json by `benchmarks/fuzz.py --table`), and tests/fuzz/test_fuzz.py
checks that a modest sample already reaches every family.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .grammar import (
    Binary,
    Expr,
    LeadingReduce,
    Leaf,
    LoopReduce,
    Mask,
    Matmul,
    Pointwise,
    Program,
    Reduce,
    Refused,
    Scalar,
    SliceReduce,
    Unary,
    Where,
    family_exprs,
    subexprs,
)


def _family(program: Program) -> Iterator[str]:
    f = program.family
    match f:
        case Pointwise(rank=rank, outputs=outs):
            yield f"{rank}-D grid (hl.tile)"
            if len(outs) > 1:
                yield "several outputs"
        case SliceReduce(axis=axis, reduce=r, center=c):
            yield "full-row slice x[tile, :]" if axis == -1 else "column slice x[:, tile]"
            yield from _reduce(r, "last axis" if axis == -1 else "second-last axis")
            if c is not None:
                yield "several outputs"
                yield "reduction broadcast back ([:, None] / [None, :])"
        case LoopReduce(axis=axis, reduce=r):
            yield "inner hl.tile loop, loop-carried value"
            yield from _reduce(r, "looped " + ("last axis" if axis == -1 else "second-last axis"))
        case LeadingReduce(reduce=r):
            yield "3-D tensor, full leading slice x[:, tile_m, tile_n]"
            yield from _reduce(r, "leading axis")
        case Matmul():
            yield "matmul (@) with epilogue"
        case Refused(construct=c):
            yield f"refused: {c}"


def _reduce(r: Reduce, where: str) -> Iterator[str]:
    yield f"{r.op} over the {where}"
    if r.keepdim:
        yield "keepdim=True"
    if r.dtype in ("int64", "int32"):
        yield f"{r.dtype} index output"


def constructs(program: Program) -> set[str]:
    """The names of the constructs `program` uses (family, ops, reads, formats, arch)."""
    found = set(_family(program))
    for spec in program.leaves:
        found.add(
            {
                "tile": "tile load",
                "row": "1-D row broadcast v[tile_n][None, :]",
                "col": "1-D column broadcast v[tile_m][:, None]",
                "acc": "matmul accumulator",
            }[spec.kind]
        )
        found.add(f"{spec.dtype} tensor")
        if spec.upcast:
            found.add(".float() of a load")
    for e in family_exprs(program.family):
        for node in subexprs(e):
            match node:
                case Unary(op=op):
                    found.add(f"unary {op}")
                case Binary(op=op, rhs=rhs):
                    kind = "scalar arg" if isinstance(rhs, Scalar) else "constant"
                    found.add(
                        f"binary {op}" + (f" with a {kind}" if not isinstance(rhs, Expr) else "")
                    )
                case Where(cmp=cmp):
                    found.add(f"torch.where on {cmp}")
                case Mask(axis=axis):
                    found.add(f"tile.index mask ({'row' if axis == 'n' else 'column'})")
                case Leaf():
                    pass
    found.add(f"formats {program.formats or 'as given'}")
    found.add("arch variant" if program.arch.grid_y else f"arch {program.arch.base}")
    dims = program.dims[-2:]
    found.add("dims all multiples of 32" if all(d % 32 == 0 for d in dims) else "misaligned dims")
    return found


def coverage_table(coverage: Mapping[str, int], programs: int) -> str:
    """The coverage table of docs/fuzzing.md (markdown) from a campaign's counts (its
    summary.json `coverage` and `programs`): most frequent first, ties by name, the share
    of programs rounded to a whole percent."""
    rows = sorted(coverage.items(), key=lambda item: (-item[1], item[0]))
    lines = ["| construct | programs | share |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {n} | {round(100 * n / max(programs, 1))}% |" for name, n in rows]
    return "\n".join(lines)
