"""Dataflow stage: virtual buffers (reification) and their L1 storage (concretization)."""

from loom.dataflow.concretize import concretize, spread_loads
from loom.dataflow.layout import infer_layouts
from loom.dataflow.reify import reify
from loom.ir.buffers import BufferedProgram
from loom.ir.tile import TileProgram


def build_buffers(program: TileProgram) -> BufferedProgram:
    """Reify `program`'s tile values into virtual buffers and bind them to L1 storage."""
    layouts, buffers, inlined = reify(program)
    allocations = concretize(buffers)
    return BufferedProgram(
        program=program,
        layouts={name: vl.layout for name, vl in layouts.items()},
        buffers=spread_loads(buffers, allocations),
        allocations=allocations,
        inlined=inlined,
    )


__all__ = ["build_buffers", "concretize", "infer_layouts", "reify"]
