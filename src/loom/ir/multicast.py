"""Multicast pipes of aligned blocks of cores: the one geometric rule that both the Helion
lowering and the CUDA path use to deliver a block once and multicast it to its block."""

from __future__ import annotations

from loom.errors import ScheduleError
from loom.ir.program import Pipe


def multicast_pipes(
    cores: tuple[int, int], area: tuple[int, int], last: bool = False
) -> tuple[tuple[Pipe, ...], tuple[Pipe, ...]]:
    """Pipes from the sending corner of each aligned `area` block to the rest of the block.

    The corner is the one from which the sending engine's NoC runs into the block: NoC0
    goes east then south, so its sender is the first core (top left); NoC1 goes north then
    west, so its sender (`last`) is the bottom-right core. From the other corner the
    multicast would wrap around the torus and cross the whole row and column.

    A rectangle without its corner is not a rectangle, so a 2-D block takes two pipes:
    one along the sender's own row and one over the other rows. They go to two nets,
    because a core is the source of at most one pipe per net.
    """
    (cy, cx), (ay, ax) = cores, area
    if cy % ay or cx % ax:
        raise ScheduleError(
            f"a multicast area of {ay}x{ax} cores does not tile the {cy}x{cx} cores in use; "
            "multicast groups must be aligned blocks of the core grid."
        )
    row: list[Pipe] = []
    rest: list[Pipe] = []
    for oy in range(0, cy, ay):
        for ox in range(0, cx, ax):
            if last:
                sy, sx = oy + ay - 1, ox + ax - 1
                row_x, rest_y = (ox, sx), (oy, sy)
            else:
                sy, sx = oy, ox
                row_x, rest_y = (ox + 1, ox + ax), (oy + 1, oy + ay)
            if ax > 1:
                row.append(Pipe((sy, sx), (sy, sy + 1), row_x))
            if ay > 1:
                rest.append(Pipe((sy, sx), rest_y, (ox, ox + ax)))
    return tuple(row), tuple(rest)
