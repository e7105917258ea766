"""Loop-invariant elementwise ops moved out of their loop.

`q_scaled = q * qk_scale` written inside a key loop, with `q` loaded before it, computes
the same block on every step: Helion's `attention.py` does so on purpose (on a GPU,
recomputing the scaled block in registers spills less than keeping it). On a Tensix core
the block lives in L1 either way, and recomputing it costs one elementwise pass per loop
step, so the pass computes it once, before the loop; the buffer plan then holds the
result through the loop, as it holds any value defined before a loop and read in it.

Moved: an `Elementwise` or `Convert` at the top level of a loop body (not under a guard)
whose value operands are all defined outside the loop (not by its body, nor carried by
it), with at least one value operand. The op keeps its result value, so readers are
unchanged; moving it out of an inner loop lets the next outer loop consider it too.
Nothing else moves: loads, reductions and matmuls stay where the source puts them.
"""

from __future__ import annotations

from dataclasses import replace

from loom.ir.tile import Convert, Elementwise, ForLoop, If, Op, TileProgram, walk


def _defines(op: Op) -> set[str]:
    """The values `op` defines, with everything nested in it (and loops' carried args)."""
    names = {v.name for v in op.results()}
    for inner in walk((op,)):
        names.update(v.name for v in inner.results())
        if isinstance(inner, ForLoop):
            names.update(c.arg.name for c in inner.carried)
    return names


def _split(loop: ForLoop) -> tuple[list[Elementwise | Convert], list[Op]]:
    """The loop body's invariant elementwise ops, and the ops that stay."""
    varying = {c.arg.name for c in loop.carried}
    moved: list[Elementwise | Convert] = []
    kept: list[Op] = []
    for op in loop.body:
        reads = op.operands()
        if (
            isinstance(op, Elementwise | Convert)
            and reads
            and all(v.name not in varying for v in reads)
        ):
            moved.append(op)
        else:
            kept.append(op)
            varying |= _defines(op)
    return moved, kept


def _hoist(ops: tuple[Op, ...], notes: list[str]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, If):
            op = replace(op, body=_hoist(op.body, notes))
        elif isinstance(op, ForLoop):
            op = replace(op, body=_hoist(op.body, notes))
            moved, kept = _split(op)
            if moved:
                op = replace(op, body=tuple(kept))
                out += moved
                notes += [
                    f"line {m.line}: {m.result.name} does not change in the loop at "
                    f"line {op.line}; computed once before it"
                    for m in moved
                ]
        out.append(op)
    return tuple(out)


def hoist_invariants(program: TileProgram) -> TileProgram:
    """`program` (one launch) with each loop-invariant elementwise op computed before
    its loop."""
    notes: list[str] = []
    body = _hoist(program.body, notes)
    if not notes:
        return program
    return replace(program, body=body, notes=program.notes + tuple(notes))
