"""A scalar factor on a matmul's result moved onto a loop-invariant operand.

`qk = (q_blk @ k_blk.T) * scale` inside a key loop, with `q_blk` loaded before the loop,
scales an m x n block on every step; `(q_blk * scale) @ k_blk.T` scales the m x d block
once per query block, and the loop body loses one elementwise pass. The product is the
same up to one rounding of the scaled operand to its own dtype (none when the factor is
a power of two: a bf16 times 2^k is exact).

Rewritten when the matmul has no accumulator, its result feeds only that multiply, and
one operand is defined outside the innermost loop around the matmul (not by the loop
body, nor a value it carries): the scaled operand is computed right after that operand's
definition, and the matmul takes over the multiply's result value. Two loops scaling
the same operand by the same factor (causal attention's two key loops, the diagonal
block and the blocks below it) share one scaled copy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from loom.ir.tile import (
    Elementwise,
    ForLoop,
    If,
    Matmul,
    Op,
    TileProgram,
    Value,
    walk,
)

_SCALABLE = frozenset({"bf16", "fp16", "fp32"})
"""Operand dtypes an elementwise multiply produces in place (not block-float or int)."""


@dataclass(frozen=True)
class _Hoist:
    matmul: Matmul
    scale: Elementwise
    operand: Value  # the invariant operand that takes the factor
    scaled: Value  # its scaled copy


def _uses(ops: tuple[Op, ...]) -> dict[str, int]:
    """How many times each value is read (carried inits and yields count)."""
    count: dict[str, int] = {}
    for op in walk(ops):
        reads: tuple[Value, ...] = op.operands()
        if isinstance(op, ForLoop):
            reads = reads + tuple(c.next for c in op.carried)
        for v in reads:
            count[v.name] = count.get(v.name, 0) + 1
    return count


def _defined_in(loop: ForLoop) -> frozenset[str]:
    """Values the loop body defines or carries: they change from one step to the next."""
    names = {c.arg.name for c in loop.carried}
    for op in walk(loop.body):
        names.update(v.name for v in op.results())
        if isinstance(op, ForLoop):
            names.update(c.arg.name for c in op.carried)
    return frozenset(names)


def _scalar_factor(op: Elementwise, product: str) -> float | None:
    """The constant `c` of `product * c` or `c * product`, else None."""
    if op.op != "mul" or len(op.args) != 2:
        return None
    a, b = op.args
    if isinstance(a, Value) and a.name == product and isinstance(b, float):
        return b
    if isinstance(b, Value) and b.name == product and isinstance(a, float):
        return a
    return None


def _find(
    ops: tuple[Op, ...], loop: ForLoop | None, uses: dict[str, int], names: set[str]
) -> list[_Hoist]:
    found: list[_Hoist] = []
    producers: dict[str, Matmul] = {}
    for op in ops:
        if isinstance(op, ForLoop):
            found += _find(op.body, op, uses, names)
        elif isinstance(op, If):
            found += _find(op.body, loop, uses, names)
        elif isinstance(op, Matmul) and op.acc is None and uses.get(op.result.name) == 1:
            producers[op.result.name] = op
        elif isinstance(op, Elementwise) and loop is not None:
            mm = next((producers[a.name] for a in op.operands() if a.name in producers), None)
            if mm is None or _scalar_factor(op, mm.result.name) is None:
                continue
            varying = _defined_in(loop)
            operand = next(
                (x for x in (mm.lhs, mm.rhs) if x.name not in varying and x.dtype in _SCALABLE),
                None,
            )
            if operand is None:
                continue
            name = f"{operand.name}_scaled"
            while name in names:
                name += "_"
            names.add(name)
            found.append(_Hoist(mm, op, operand, Value(name, operand.shape, operand.dtype)))
    return found


def _rewrite(ops: tuple[Op, ...], hoists: list[_Hoist]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, ForLoop | If):
            op = replace(op, body=_rewrite(op.body, hoists))
            if isinstance(op, ForLoop):
                # an operand carried by this loop: scaled at the top of each step
                args = {c.arg.name for c in op.carried}
                head = _scaled_ops([h for h in hoists if h.operand.name in args])
                op = replace(op, body=(*head, *op.body))
        hit = next((h for h in hoists if op is h.matmul), None)
        if hit is not None:
            op = _retargeted(hit)
        elif any(op is h.scale for h in hoists):
            continue
        out.append(op)
        # after the operand's definition (a loop's results are its carried results)
        out += _scaled_ops([h for h in hoists if h.operand in op.results()])
    return tuple(out)


def _scaled_ops(hoists: list[_Hoist]) -> list[Elementwise]:
    """The scaling op of each scaled copy among `hoists`, once per copy."""
    first = {h.scaled.name: h for h in reversed(hoists)}
    return [_scaled_op(h) for h in first.values()][::-1]


def _shared(hoists: list[_Hoist]) -> list[_Hoist]:
    """`hoists` with one scaled copy per operand and factor."""
    copies: dict[tuple[str, float | None], Value] = {}
    out = []
    for h in hoists:
        key = (h.operand.name, _scalar_factor(h.scale, h.matmul.result.name))
        out.append(replace(h, scaled=copies.setdefault(key, h.scaled)))
    return out


def _scaled_op(h: _Hoist) -> Elementwise:
    factor = _scalar_factor(h.scale, h.matmul.result.name)
    assert factor is not None
    return Elementwise(h.scaled, "mul", (h.operand, factor), h.scale.line)


def _retargeted(h: _Hoist) -> Matmul:
    mm = h.matmul
    lhs = h.scaled if mm.lhs.name == h.operand.name else mm.lhs
    rhs = h.scaled if lhs is not h.scaled and mm.rhs.name == h.operand.name else mm.rhs
    return replace(mm, result=h.scale.result, lhs=lhs, rhs=rhs)


def hoist_matmul_scales(program: TileProgram) -> TileProgram:
    """Every `(a @ b) * c` in a loop with `a` (or `b`) invariant there, as `(a * c) @ b`
    with `a * c` computed where `a` is (one launch)."""
    names = {v.name for op in walk(program.body) for v in (*op.results(), *op.operands())}
    names.update(
        c.arg.name for op in walk(program.body) if isinstance(op, ForLoop) for c in op.carried
    )
    hoists = _shared(_find(program.body, None, _uses(program.body), names))
    if not hoists:
        return program
    notes = tuple(
        f"line {h.scale.line}: the factor {_scalar_factor(h.scale, h.matmul.result.name):g} "
        f"on a matmul's result is applied once to its loop-invariant operand "
        f"{h.operand.name}"
        for h in hoists
    )
    return replace(program, body=_rewrite(program.body, hoists), notes=program.notes + notes)
