"""The legal annotation space of a .cu program, ranked by the analytic model.

The space is the product of every policy field that changes the lowered program of
this workload (a field with no effect on it is left at its default, so no two entries
name the same realization); each combination is compiled, illegal ones are dropped with
their reason, and the rest are ranked by the model's cycles (no simulation, no
profiling); model ties go to the set with the fewest non-default choices.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from loom.cuda import Annotations, parse_annotations
from loom.errors import AnnotationError, InfeasibleError
from loom.flows.cuda import CudaCompiled, CudaOptions, compile_cuda, model_cuda


@dataclass(frozen=True)
class Ranked:
    annotations: Annotations
    cycles: float
    us: float


@dataclass(frozen=True)
class Ranking:
    path: str
    ranked: tuple[Ranked, ...]
    rejected: tuple[tuple[str, str], ...]
    """(policy name, reason) of the illegal combinations."""


def policy_space(path: str, options: CudaOptions) -> list[dict[str, dict[str, object]]]:
    """Every combination of the fields that matter for this program."""
    from loom.cuda.ir import Load

    base = compile_cuda(path, replace(options, stop_after="tileflow"))
    assert base.flow is not None
    kernels = base.flow.kernels
    axes: list[tuple[str, str, list[object]]] = [
        ("task", "dm_lanes", [1, 2]),
        ("physical", "cb_depth", [1, 2]),
    ]
    if any(k.contraction is None for k in kernels):
        axes.append(("tileplan", "predicates", ["boundary", "all"]))
    if all(k.contraction is None for k in kernels):  # illegal ones are ranked as rejected
        axes.append(("task", "streaming", ["column", "row"]))
    if any(c.kind.startswith(("hshift", "vshift")) for k in kernels for c in k.consts):
        axes.append(("tileflow", "stencil_operator", ["separate", "fused"]))
        axes.append(("tileflow", "halo_conversion", ["receiver", "sender"]))
    if any(c.kind.startswith("hshift") for k in kernels for c in k.consts):
        axes.append(("tileflow", "halo", ["tile", "transposed"]))
    sinkable = compile_cuda(
        path,
        replace(
            options,
            stop_after="tileflow",
            annotations=parse_annotations({"tileflow": {"guard_mask": "dm"}}, "(probe)"),
        ),
    )
    if sinkable.flow is not None and any(k.sunk for k in sinkable.flow.kernels):
        axes.append(("tileflow", "guard_mask", ["compute", "dm"]))
    if any(_divides(k.tile.value) for k in kernels):
        axes.append(("tileflow", "reciprocal", ["compute", "hoisted"]))
    if any(isinstance(k.tile.value, Load) for k in kernels):
        axes.append(("tileflow", "guard_copy", ["compute", "dm"]))
    pair = _fusable_pair(base)
    if pair and _fusion_legal(path, options, pair):
        axes.append(("tileplan", "fuse", [[], list(pair)]))
    reductions = [k.tile.reduction for k in kernels if k.tile.reduction is not None]
    if reductions:
        tiles = reductions[0].extent // 32
        axes.append(("tileplan", "strip_mine", [d for d in range(1, tiles + 1) if tiles % d == 0]))
        axes.append(("tileplan", "interchange", [False, True]))
    out = []
    for values in itertools.product(*(v for _, _, v in axes)):
        data: dict[str, dict[str, object]] = {}
        for (stage, key, _), v in zip(axes, values, strict=True):
            data.setdefault(stage, {})[key] = v
        out.append(data)
    return out


def _fusable_pair(c: CudaCompiled) -> tuple[str, str] | None:
    """The first two consecutive launches where the second reads what the first writes."""
    from loom.cuda.tileplan import loads

    assert c.flow is not None
    plan = c.flow.plan
    for ph in plan.phases:
        for a, b in zip(ph.steps, ph.steps[1:], strict=False):
            p, q = plan.kernel(a.kernel), plan.kernel(b.kernel)
            if p.kernel != q.kernel and any(ld.array == p.target for ld in loads(q.value)):
                return p.kernel, q.kernel
    return None


def _fusion_legal(path: str, options: CudaOptions, pair: tuple[str, str]) -> bool:
    """The dependence check accepts the fusion (jacobi's is illegal: no axis)."""
    ann = parse_annotations({"tileplan": {"fuse": list(pair)}}, "(probe)")
    try:
        compile_cuda(path, replace(options, stop_after="tileplan", annotations=ann))
    except AnnotationError:
        return False
    return True


def _divides(v: object) -> bool:
    from loom.cuda.ir import Bin

    return isinstance(v, Bin) and (v.op == "div" or _divides(v.lhs) or _divides(v.rhs))


def rank_policies(path: str, options: CudaOptions) -> Ranking:
    ranked, rejected = [], []
    for data in policy_space(path, options):
        ann = parse_annotations(data, "(policy space)")
        try:
            c = compile_cuda(path, replace(options, annotations=ann, stop_after=None))
            cyc = model_cuda(c)
        except (AnnotationError, InfeasibleError) as err:
            rejected.append((ann.name(), str(err)))
            continue
        ranked.append(Ranked(ann, cyc, options.arch.cycles_to_us(cyc)))
    # among model ties, the realization closest to the defaults first
    ranked.sort(key=lambda r: (round(r.cycles, 6), _changes(r.annotations), r.annotations.name()))
    return Ranking(path, tuple(ranked), tuple(rejected))


def _changes(ann: Annotations) -> int:
    name = ann.name()
    return 0 if name == "default" else len(name.split())


def format_ranking(r: Ranking, top: int) -> str:
    lines = [
        f"policies of {r.path}: {len(r.ranked)} legal, {len(r.rejected)} rejected; "
        "ranked by the model (no simulation)"
    ]
    lines.append(f"{'rank':>4}  {'model us':>10}  policy")
    for i, x in enumerate(r.ranked[:top], start=1):
        lines.append(f"{i:>4}  {x.us:>10.1f}  {x.annotations.name()}")
    for name, why in r.rejected[:3]:
        lines.append(f"  rejected {name}: {why}")
    return "\n".join(lines) + "\n"
