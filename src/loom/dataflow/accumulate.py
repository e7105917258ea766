"""Find the matmul accumulators whose placement the schedule may choose.

An accumulator here is a loop-carried value that

* starts from a fill (`hl.zeros`) read by nothing but the loop,
* is updated once per iteration by one matmul, `next = arg + a @ b`, and read by nothing
  else inside the loop,
* owns its state allocation alone.

Such a value need not be copied between two blocks: the packer can add every step into
one block it keeps (placement ``l1``, see `loom.ir.buffers.PLACEMENTS`). When its final
value is only stored (directly or converted to the output's format), in the same scope
as the state, the store block itself can hold it (placement ``output``) if the
accumulation policy allows accumulating in the output's format. The lowering
(`loom.lower.accumulate`) realizes exactly these shapes.
"""

from __future__ import annotations

from loom.ir.buffers import PLACEMENTS, Accumulator, Allocation, VirtualBuffer
from loom.ir.tile import Convert, ForLoop, Full, Matmul, Op, Store, TileProgram


def _uses(ops: tuple[Op, ...], name: str) -> list[Op]:
    """Ops of `ops` (not inside loops' bodies) that read `name`."""
    return [op for op in ops if name in {v.name for v in op.operands()}]


def _alone(allocs: tuple[Allocation, ...], vb: VirtualBuffer | None) -> Allocation | None:
    """The allocation of `vb` when it holds `vb` only."""
    if vb is None:
        return None
    for a in allocs:
        if vb.name in a.buffers:
            return a if a.buffers == (vb.name,) else None
    return None


def find_accumulators(
    program: TileProgram,
    buffers: tuple[VirtualBuffer, ...],
    allocations: tuple[Allocation, ...],
    policy: str = "strict",
) -> tuple[Accumulator, ...]:
    """The accumulators of `program`, each with the placements `policy` allows."""

    def holding(value: str) -> VirtualBuffer | None:
        return next((vb for vb in buffers if value in vb.values), None)

    found: list[Accumulator] = []

    def visit(ops: tuple[Op, ...]) -> None:
        for op in ops:
            body = getattr(op, "body", None)
            if isinstance(body, tuple):
                visit(body)
            if not isinstance(op, ForLoop):
                continue
            for c in op.carried:
                if not _accumulator(ops, op, c.init.name, c.arg.name, c.next.name):
                    continue
                state = _alone(allocations, holding(c.init.name))
                if state is None or state.role != "state":
                    continue
                store = _store_of(ops, c.result.name)
                store_alloc = _alone(allocations, holding(store)) if store else None
                if store_alloc is not None and (
                    store_alloc.role != "store" or store_alloc.scope != state.scope
                ):
                    store_alloc = None
                placements: tuple[str, ...] = PLACEMENTS[:2]
                if policy == "output" and store_alloc is not None:
                    placements = PLACEMENTS
                found.append(
                    Accumulator(
                        state.name,
                        store_alloc.name if store_alloc is not None else "",
                        state.scope,
                        placements,
                    )
                )

    visit(program.body)
    return tuple(found)


def _accumulator(ops: tuple[Op, ...], loop: ForLoop, init: str, arg: str, nxt: str) -> bool:
    """Whether the carried value is a fill-started matmul accumulator."""
    starts = [op for op in ops if init in {r.name for r in op.results()}]
    if len(starts) != 1 or not isinstance(starts[0], Full):
        return False
    if [u for u in _uses(ops, init) if u is not loop]:
        return False
    updates = [op for op in loop.body if nxt in {r.name for r in op.results()}]
    if len(updates) != 1 or not isinstance(updates[0], Matmul):
        return False
    mm = updates[0]
    if mm.acc is None or mm.acc.name != arg:
        return False
    return _uses(loop.body, arg) == [mm] and not _uses(loop.body, nxt)


def _store_of(ops: tuple[Op, ...], result: str) -> str:
    """The value stored from the loop's result when that is all it is used for: the
    result itself, or its conversion to the output's format ('' otherwise)."""
    uses = _uses(ops, result)
    if len(uses) != 1:
        return ""
    use = uses[0]
    if isinstance(use, Store):
        return result
    if isinstance(use, Convert):
        stores = _uses(ops, use.result.name)
        if len(stores) == 1 and isinstance(stores[0], Store):
            return use.result.name
    return ""
