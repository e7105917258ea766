"""Dataflow stage: virtual buffers (reification) and their L1 storage (concretization)."""

from dataclasses import replace

from loom.dataflow.accumulate import find_accumulators
from loom.dataflow.concretize import concretize, spread_loads, unshare_stored_loads
from loom.dataflow.layout import infer_layouts
from loom.dataflow.reify import reify
from loom.ir.buffers import BufferedProgram, VirtualBuffer
from loom.ir.scope import Scope
from loom.ir.tile import TileProgram


def build_buffers(
    program: TileProgram, accumulate: str = "strict", apart: bool = False
) -> BufferedProgram:
    """Reify `program`'s tile values into virtual buffers and bind them to L1 storage;
    `accumulate` is the accumulation policy (`loom.ir.buffers.ACCUMULATE_POLICIES`);
    `apart`: a store pass loads a tensor the plan shares on the writer into a buffer of
    its own (`unshare_stored_loads`; `Schedule.buffering`)."""
    layouts, buffers, inlined, rebuilt = reify(program)
    scopes = _scopes(buffers)
    buffers = tuple(replace(vb, scope=scopes[vb.scope]) for vb in buffers)
    allocations = tuple(replace(a, scope=scopes[a.scope]) for a in concretize(buffers))
    if apart:
        allocations = unshare_stored_loads(program, buffers, allocations)
    return BufferedProgram(
        program=program,
        layouts={name: vl.layout for name, vl in layouts.items()},
        buffers=spread_loads(program, buffers, allocations),
        allocations=allocations,
        inlined=inlined,
        rebuilt=rebuilt,
        scopes=tuple(scopes.values()),
        accumulators=find_accumulators(program, buffers, allocations, accumulate),
    )


def _scopes(buffers: tuple[VirtualBuffer, ...]) -> dict[Scope, Scope]:
    """Every scope of `buffers` (in first-use order) with the loads and stores it owns."""
    found: dict[Scope, Scope] = {}
    for vb in buffers:
        found.setdefault(vb.scope, vb.scope)
    return {
        s: s.with_buffers(
            tuple(vb.name for vb in buffers if vb.scope == s and vb.role == "load"),
            tuple(vb.name for vb in buffers if vb.scope == s and vb.role == "store"),
        )
        for s in found
    }


__all__ = ["build_buffers", "concretize", "infer_layouts", "reify"]
