"""Checkpoint 3, Task: which engine does what, and where values cross engines.

Every operand delivery is a data-movement task on DM0 (the reader, NoC0) or DM1 (the
writer, NoC1, which also writes results); the tile expression is the compute task; a
logical L1 buffer stands at every crossing (each delivered operand, each constant
frame, the result). With `dm_lanes: 2`, deliveries whose source tile differs along the
column axis (west/east halos, column panels, row frames) move to DM1, so that, as in
the seed's jacobi split, the two lanes read separate views. The own tile that a masked
overlay preserves stays on DM0. Row streaming (`streaming: row`, one synchronisation
per shard row, see cuda/rows.py) is rejected, as in the seed, where a value crosses
compute -> DM -> compute inside the column loop (a sender-converted halo patch), and
where the tile expression has no 1xW block form (a right operator applied to a row
other than a column shift, which becomes a band operator; a transposed operand).
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.cuda.annotations import Annotations
from loom.cuda.rows import row_problem, wide_operands, widen
from loom.cuda.tileflow import FlowKernel, Operand, TileFlow
from loom.errors import AnnotationError


@dataclass(frozen=True, slots=True)
class TaskKernel:
    flow: FlowKernel
    lanes: tuple[tuple[str, str], ...]
    """Operand name -> "reader" (DM0) or "writer" (DM1)."""
    buffers: tuple[str, ...]
    """Logical L1 buffers: operands, constants, masks, accumulator, result."""
    notes: tuple[str, ...]

    def lane(self, operand: str) -> str:
        return dict(self.lanes)[operand]


@dataclass(frozen=True, slots=True)
class Task:
    flow: TileFlow
    kernels: tuple[TaskKernel, ...]
    streaming: str

    def kernel(self, key: str) -> TaskKernel:
        return next(k for k in self.kernels if k.flow.key == key)


def build_task(flow: TileFlow, ann: Annotations) -> Task:
    pol = ann.task
    if pol.streaming == "row":
        for k in flow.kernels:
            if k.conversions:  # the seed's rule
                raise AnnotationError(
                    f"{flow.plan.path}:{k.tile.line}: task.streaming=row is illegal for "
                    f"`{k.key}`: with halo_conversion: "
                    "sender a halo patch crosses compute -> DM -> compute inside the column "
                    "loop (converted, sent, then used), which needs a synchronisation at "
                    "every column; use streaming: column or halo_conversion: receiver."
                )
            problem = row_problem(k)
            if problem is not None:
                raise AnnotationError(
                    f"{flow.plan.path}:{k.tile.line}: task.streaming=row is illegal for "
                    f"`{k.key}`: {problem}; use streaming: column."
                )
    kernels = []
    for k in flow.kernels:
        lanes = tuple((o.name, _lane(o, k, pol.dm_lanes)) for o in k.operands)
        notes = []
        moved = [n for n, lane in lanes if lane == "writer"]
        if pol.dm_lanes == 2:
            notes.append(
                f"DM1 delivers {', '.join(moved)}"
                if moved
                else "dm_lanes=2: no delivery qualifies for DM1 (all own-tile); DM0 only"
            )
        if pol.streaming == "row":
            wide = [o.name for o in k.operands if o.name in wide_operands(k)]
            form = widen(k, k.expr)
            reps = sorted(form.repeated)
            notes.append(
                f"streaming=row: {', '.join(wide)}, masks and the result move as one 1xW "
                "block per shard row (one reserve/push each)"
                + (f"; right operators repeated along the row: {', '.join(reps)}" if reps else "")
            )
            for sh in form.shifts:
                halos = ", ".join(f"{h} @ {name}" for name, h, _, _ in sh.edges)
                patch = f", halo tiles patched in by 1xW edge rows: {halos}" if halos else ""
                notes.append(
                    f"streaming=row: column shift of {sh.own} as one WxW band operator "
                    f"{sh.own} @ {sh.band} ({' + '.join(c for _, c in sh.terms)} on their "
                    f"diagonals){patch}"
                )
        bufs = [o.name for o in k.operands] + [c.name for c in k.consts] + ["mask", "nmask", "out"]
        if k.contraction:
            bufs.append("acc")
        kernels.append(TaskKernel(k, lanes, tuple(bufs), tuple(notes)))
    return Task(flow, tuple(kernels), pol.streaming)


def _lane(o: Operand, k: FlowKernel, lanes: int) -> str:
    if lanes == 1 or o.name == k.old:
        return "reader"
    moved = (o.col.base == "c" and o.col.delta != 0) or (o.role == "frame" and o.row.base is None)
    if k.contraction and o.name == k.contraction.rhs.name:
        moved = True
    return "writer" if moved else "reader"


def format_task(task: Task) -> str:
    out = [f"task @{task.flow.plan.name}  streaming={task.streaming}"]
    for k in task.kernels:
        dm0 = [n for n, lane in k.lanes if lane == "reader"]
        dm1 = [n for n, lane in k.lanes if lane == "writer"]
        out.append(f"  kernel {k.flow.key}")
        out.append(
            f"    DM0 (NoC0): consts {', '.join(c.name for c in k.flow.consts) or '-'}; "
            f"operands {', '.join(dm0) or '-'}; masks"
        )
        work = "copy (unmasked tiles bypass compute)" if k.flow.dm_copy else "tile expression"
        out.append(
            f"    compute: {work}"
            f"{' + accumulation' if k.flow.contraction else ''} + masked overlay on cut tiles"
        )
        out.append(
            f"    DM1 (NoC1): operands {', '.join(dm1) or '-'}; write {k.flow.tile.target}[r][c]"
        )
        out.append(f"    L1 buffers at crossings: {', '.join(k.buffers)}")
        out.extend(f"    note: {n}" for n in k.notes)
    return "\n".join(out) + "\n"
