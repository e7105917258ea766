"""The lowered Compute statements of a straight-line body, as the model sees them: where
a block is held and popped, and so where the stages around a body cut it (the store
chain, `loom.model.stores`; a single-slot load's refetch, `loom.model.slots`)."""

from __future__ import annotations

from typing import NamedTuple

from loom.ir.tile import Op
from loom.model.compute import Compute
from loom.symbolic import Expr


class Statement(NamedTuple):
    """One lowered Compute statement: what it reads, its ops' cycles, what it computes."""

    reads: set[str]
    cycles: list[Expr]
    computes: set[str]


def lowered_statements(model: Compute, body: list[Op]) -> list[Statement]:
    """The lowered Compute statements of a straight-line body, in program order: each op
    whose result has a buffer (or is read by no later op) with the ops computed inline in
    it (`loom.dataflow` fuses a chain of unbuffered values into their reader's
    statement), as the names the statement reads, its ops' terms and the names it
    computes (its own op's results, not the inline ones'). A block is popped
    when the statement that reads it ends, and a block's first reader starts with its
    statement's inline ops, so the cuts fall between statements, not between ops
    (RMSNorm's `x * inv * w`: one statement reads the row and the weight)."""
    later: set[str] = set()
    inline: set[int] = set()
    for i in range(len(body) - 1, -1, -1):
        results = body[i].results()
        if results and all(not model.buffered_value(v) and v.name in later for v in results):
            inline.add(i)
        later |= {v.name for v in body[i].operands()}
    statements: list[Statement] = []
    taken: set[int] = set()
    index = {id(op): i for i, op in enumerate(body)}
    for i, op in enumerate(body):
        if i in inline:
            continue
        reads = {v.name for v in op.operands()}
        cycles = [t.cycles for t in model.op_terms(op)]
        todo = [v for v in op.operands() if not model.buffered_value(v)]
        while todo:
            j = index.get(id(model.producers.get(todo.pop().name)))
            if j is None or j not in inline or j in taken:
                continue
            taken.add(j)
            reads |= {v.name for v in body[j].operands()}
            cycles += [t.cycles for t in model.op_terms(body[j])]
            todo += [v for v in body[j].operands() if not model.buffered_value(v)]
        statements.append(Statement(reads, cycles, {v.name for v in op.results()}))
    return statements
