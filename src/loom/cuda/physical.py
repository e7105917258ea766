"""Checkpoint 4, Physical: circular-buffer depths, L1 plan, barriers and Dst.

* CB depth: 1 by default, 2 for streamed operand deliveries with `cb_depth: 2`
  (accumulators always hold two blocks: the running sum is waited while the next one is
  reserved).
* L1: the statically planned per-core footprint (every buffer x depth x block bytes),
  and the seed's own scope limit, the persistent per-core working set (each core's share
  of the arrays), must both fit the architecture's usable L1.
* Grid barriers: between consecutive launches, for each array one launch writes and the
  next reads (RAW) or one reads and the next writes (WAR); Loom realizes each as the
  launch boundary.
* Dst: live tiles of the tile expression by a Sethi-Ullman count (the linear-scan
  register need of an expression tree); tiles beyond the Dst capacity spill to L1.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.cuda.annotations import Annotations
from loom.cuda.rows import shard_width, wide_operands, widen
from loom.cuda.task import Task, TaskKernel
from loom.cuda.tileflow import block_refs
from loom.cuda.tileplan import TILE
from loom.errors import InfeasibleError
from loom.ir.program import BinaryExpr, CExpr, MatmulExpr

PRECISIONS = ("bf16", "fp32")


@dataclass(frozen=True, slots=True)
class PhysKernel:
    task: TaskKernel
    l1_bytes: int
    dst_tiles: int
    dst_spills: int


@dataclass(frozen=True, slots=True)
class Physical:
    task: Task
    arch: str
    precision: str
    depth: int
    kernels: tuple[PhysKernel, ...]
    barriers: tuple[str, ...]
    working_set_bytes: int
    """Per-core share of all arrays (the seed's persistent-L1 working set)."""
    l1_bytes: int
    barrier_pairs: tuple[tuple[str, str], ...] = ()
    """(kernel, next kernel) launch boundaries that need a grid barrier."""

    def kernel(self, key: str) -> PhysKernel:
        return next(k for k in self.kernels if k.task.flow.key == key)

    def needs_barrier(self, before: str, after: str) -> bool:
        return (before, after) in self.barrier_pairs


def build_physical(task: Task, arch: Arch, precision: str, ann: Annotations) -> Physical:
    plan = task.flow.plan
    depth = ann.physical.cb_depth
    tile_bytes = arch.tile.bytes(precision)
    total = sum(a.rows * a.cols for a in plan.arrays) // (TILE * TILE) * tile_bytes
    working = -(-total // arch.num_cores)
    if working > arch.l1_usable_bytes:
        sizes = ", ".join(f"{a.name} {a.rows}x{a.cols}" for a in plan.arrays)
        raise InfeasibleError(
            f"{plan.path}: the per-core working set is {working} bytes ({sizes} at "
            f"{precision} over {arch.num_cores} cores), more than the {arch.l1_usable_bytes} "
            f"bytes of usable L1 on {arch.name}; the affine CUDA path keeps arrays resident "
            "in L1 (the seed's scope), so choose a smaller --define size or bf16."
        )
    kernels = []
    for k in task.kernels:
        width = _row_width(task, k, arch) if task.streaming == "row" else 1
        l1 = _l1(k, depth, tile_bytes, width)
        if l1 > arch.l1_usable_bytes:
            raise InfeasibleError(
                f"{plan.path}: kernel `{k.flow.key}` needs {l1} bytes of L1 buffers per core "
                f"at cb_depth={depth}"
                f"{f' with {width}-tile shard rows (streaming: row)' if width > 1 else ''}, "
                f"more than {arch.l1_usable_bytes}; lower tileplan.strip_mine or "
                "physical.cb_depth, or use streaming: column."
            )
        need = _dst_need(k.flow.expr)
        cap = arch.compute.dst_capacity(precision)
        kernels.append(PhysKernel(k, l1, need, max(0, need - cap)))
    return Physical(
        task,
        arch.name,
        precision,
        depth,
        tuple(kernels),
        tuple(text for _, text in _barriers(task)),
        working,
        arch.l1_usable_bytes,
        tuple(dict.fromkeys(pair for pair, _ in _barriers(task))),
    )


def _row_width(task: Task, k: TaskKernel, arch: Arch) -> int:
    """Tiles per shard row of the kernel's widest-sharded launch (streaming: row)."""
    plan = task.flow.plan
    cols = plan.array(k.flow.tile.target).cols // TILE
    ranges = set()
    for step, env in plan.launches():
        if step.kernel == k.flow.key:
            _, _, c0, c1 = k.flow.tile.region.at(env)
            if c0 < c1:
                ranges.add((c1 - 1) // TILE - c0 // TILE + 1)
    return max((shard_width(nc, arch.grid_x, cols)[0] for nc in ranges), default=1)


def _l1(k: TaskKernel, depth: int, tile_bytes: int, width: int = 1) -> int:
    wide = frozenset[str]()
    held = len(k.flow.consts)
    if width > 1:  # row streaming: shard-row blocks, multi-tile operators held
        wide, form = wide_operands(k.flow), widen(k.flow, k.flow.expr)
        held = 0
        for name in block_refs(form.expr):
            shape = form.operator_shape(name, width)
            if shape is not None:
                held += shape[0] * shape[1]
            elif any(c.name == name for c in k.flow.consts):
                held += 1
    tiles = sum(o.rows * o.cols * depth * (width if o.name in wide else 1) for o in k.flow.operands)
    tiles += held + len(k.flow.hoisted)  # held
    tiles += 3 * depth * width  # mask, nmask, out
    if k.flow.contraction:
        tiles += 2
    return tiles * tile_bytes


def _dst_need(e: CExpr) -> int:
    match e:
        case BinaryExpr(lhs=a, rhs=b) | MatmulExpr(lhs=a, rhs=b):
            x, y = _dst_need(a), _dst_need(b)
            return max(x, y) if x != y else x + 1
    return 1


def _barriers(task: Task) -> tuple[tuple[tuple[str, str], str], ...]:
    """((kernel, next kernel), description) for each dependence across a launch boundary."""
    plan = task.flow.plan
    seq = [s.kernel for s, _ in plan.launches()[: 2 * max(1, len(plan.kernels))]]
    out: list[tuple[tuple[str, str], str]] = []
    if len(seq) < 2:
        return ()
    for a, b in zip(seq, seq[1:] + seq[:1], strict=True):
        ka, kb = plan.kernel(a), plan.kernel(b)
        reads_b = task.flow.kernel(b).operands
        if any(o.array == ka.target for o in reads_b):
            out.append(((a, b), f"{a} -> {b}: RAW on {ka.target}"))
        if (
            any(o.array == kb.target for o in task.flow.kernel(a).operands)
            and kb.target != ka.target
        ):
            out.append(((a, b), f"{a} -> {b}: WAR on {kb.target}"))
    return tuple(dict.fromkeys(out))


def format_physical(ph: Physical) -> str:
    out = [
        f"physical @{ph.task.flow.plan.name}  arch={ph.arch} precision={ph.precision} "
        f"cb_depth={ph.depth}",
        f"  persistent working set {ph.working_set_bytes} B/core of {ph.l1_bytes} B L1",
    ]
    for k in ph.kernels:
        out.append(
            f"  kernel {k.task.flow.key}: L1 buffers {k.l1_bytes} B/core, Dst "
            f"{k.dst_tiles} tile(s) live, {k.dst_spills} spill(s)"
        )
    out.extend(f"  barrier {b}" for b in ph.barriers)
    return "\n".join(out) + "\n"
