"""The latency graph (HEG) of the chosen candidate, evaluated at the solution.

Every node carries its modeled cycles for the whole kernel (its latency times the trip
counts of the loops around it) and whether it lies on the *binding path*: from the
root, the dominant branch of every pipe under the chosen knobs, down to the largest
primitive term — the same walk as :func:`loom.solve.explain.bottleneck`. Load and store
stages and compute leaves also carry what the simulator measured for the engine that
runs them (mean busy cycles of the reader, compute and writer engines over the cores),
so modeled and simulated time sit side by side.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from loom.ir.problem import For, HegNode, Leaf, Pipe, Problem, Seq, Stage, latency, pipes
from loom.ir.schedule import Schedule
from loom.sim import SimResult


@dataclass(frozen=True, slots=True)
class TermItem:
    kind: str
    what: str
    cycles: int
    binding: bool


@dataclass(frozen=True, slots=True)
class HegItem:
    kind: str
    """for | seq | pipe | load | store | compute | fixed"""
    name: str
    detail: str
    """Trip count of a loop, overlap of a pipe."""
    cycles: int
    """Modeled cycles of this node over the whole kernel."""
    share: float
    """cycles / modeled total."""
    binding: bool
    terms: tuple[TermItem, ...]
    children: tuple[HegItem, ...]
    simulated: float | None
    """Mean busy cycles (over the cores) of the engine that runs this node, from the
    simulator; given to the node of each engine that the model charges most."""
    engine: str


KNOB_TEXT = {
    (0, 0): "sequential (load, compute, store)",
    (0, 1): "store overlapped with the next block (double-buffered output)",
    (1, 0): "loads overlapped with compute (double-buffered inputs)",
    (1, 1): "loads and stores overlapped with compute (double-buffered)",
}

_ENGINE = {"load": "reader", "store": "writer", "compute": "compute"}


def heg_view(problem: Problem, schedule: Schedule, sim: SimResult | None) -> HegItem:
    env: dict[str, int] = dict(schedule.block_sizes)
    for p in pipes(problem.heg):
        knobs = schedule.pipeline.get(p.name, {"b_load": 0, "b_store": 0})
        env[p.b_load.name] = knobs["b_load"]
        env[p.b_store.name] = knobs["b_store"]
    total = max(problem.objective.eval(env), 1)
    tree = _walk(problem.heg, env, schedule, 1, total, True, {}, "compute")
    if sim is None:
        return tree
    busy = {e.engine: e.mean * sim.kernel_cycles for e in sim.engine_busy}
    # Each engine's simulated busy time goes to the one node of its kind that the model
    # charges most: the simulator does not know the graph's nodes, only its engines.
    heaviest: dict[str, HegItem] = {}
    for node in _nodes(tree):
        if node.engine and node.cycles > (
            heaviest[node.engine].cycles if node.engine in heaviest else -1
        ):
            heaviest[node.engine] = node
    return _attach(tree, {id(n): busy.get(e) for e, n in heaviest.items()})


def _nodes(item: HegItem) -> list[HegItem]:
    return [item, *(n for c in item.children for n in _nodes(c))]


def _attach(item: HegItem, simulated: dict[int, float | None]) -> HegItem:
    return dataclasses.replace(
        item,
        simulated=simulated.get(id(item)),
        children=tuple(_attach(c, simulated) for c in item.children),
    )


def _walk(
    node: HegNode,
    env: dict[str, int],
    schedule: Schedule,
    scale: int,
    total: int,
    binding: bool,
    busy: dict[str, float],
    role: str,
) -> HegItem:
    cycles = latency(node).eval(env) * scale

    def item(
        kind: str, detail: str, children: tuple[HegItem, ...] = (), terms: tuple[TermItem, ...] = ()
    ) -> HegItem:
        engine = _ENGINE.get(kind, "")
        return HegItem(
            kind,
            node.name,
            detail,
            cycles,
            cycles / total,
            binding,
            terms,
            children,
            busy.get(engine) if engine else None,
            engine,
        )

    match node:
        case For(trip=trip, body=body):
            n = trip.eval(env)
            child = _walk(body, env, schedule, scale * n, total, binding, busy, role)
            return item("for", f"{n} iteration{'' if n == 1 else 's'}", (child,))
        case Seq(children=children):
            lat = [latency(c).eval(env) for c in children]
            top = lat.index(max(lat)) if lat else -1
            return item(
                "seq",
                "",
                tuple(
                    _walk(c, env, schedule, scale, total, binding and i == top, busy, role)
                    for i, c in enumerate(children)
                ),
            )
        case Pipe(load=load, body=body, store=store):
            knobs = schedule.pipeline.get(node.name, {"b_load": 0, "b_store": 0})
            parts = (load, body, store)
            lat = [latency(c).eval(env) for c in parts]
            top = lat.index(max(lat))
            roles = ("load", "compute", "store")
            return item(
                "pipe",
                KNOB_TEXT[(knobs["b_load"], knobs["b_store"])],
                tuple(
                    _walk(c, env, schedule, scale, total, binding and i == top, busy, roles[i])
                    for i, c in enumerate(parts)
                ),
            )
        case Leaf(terms=terms) | Stage(terms=terms):
            values = [t.cycles.eval(env) * scale for t in terms]
            top = values.index(max(values)) if values else -1
            # a stage is named by its role ("store@..." may also sit in a body)
            kind = node.name.split("@")[0] if isinstance(node, Stage) else "compute"
            if terms and all(t.kind == "fixed" for t in terms):
                kind = "fixed"  # e.g. the program launch: no engine runs it
            return item(
                kind,
                "",
                terms=tuple(
                    TermItem(t.kind, t.what, v, binding and i == top)
                    for i, (t, v) in enumerate(zip(terms, values, strict=True))
                ),
            )
    return item("node", "")


def binding_path(item: HegItem) -> tuple[str, ...]:
    """Names along the binding path, root first, ending with the dominant term."""
    path: list[str] = []
    node: HegItem | None = item
    while node is not None:
        if node.kind != "seq":
            path.append(node.name)
        term = next((t for t in node.terms if t.binding), None)
        if term is not None:
            path.append(f"{term.what} [{term.kind}]")
        node = next((c for c in node.children if c.binding), None)
    return tuple(path)
