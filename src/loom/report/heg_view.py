"""The latency graph (HEG) of the chosen candidate, evaluated at the solution.

Every node carries its modeled cycles for the whole kernel (its latency times the trip
counts of the loops around it) and whether it lies on the *binding path*: from the
root, the dominant branch of every pipe under the chosen knobs, down to the largest
primitive term — the same walk as :func:`loom.solve.explain.bottleneck`.

With a traced simulation, the load and store stages and the compute of every pipe also
carry what the simulator measured for that pipe alone, so modeled and simulated time sit
side by side per node: each busy interval of the trace names the loops around its
statement, the innermost loop that is a pipe of the graph (`tile_k_id` -> `loop:tile_k`;
else the outermost pipe, the grid) gives the pipe, and the statement gives the stage
(`write` and gather sends/receives store; `compute` computes; DRAM reads and multicast
sends/receives load). The figure is the busy cycles summed over all cores and engines,
divided by the number of cores: a per-core mean like the modeled cycles. A pipe whose
body has several compute leaves carries its compute time on the body.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from loom.ir.buffers import ACC_KNOB, PLACEMENTS
from loom.ir.problem import For, HegNode, Leaf, Pipe, Problem, Seq, Stage, latency, pipes
from loom.ir.schedule import Schedule
from loom.ir.scope import Scope
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
    """Simulated busy cycles of this node's statements (mean over the cores), or None."""
    engine: str
    """The engines whose statements make up `simulated` ('reader+writer'), or the engine
    kind that runs the node when not simulated."""


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
    for name in problem.knob_names:
        if name.startswith(ACC_KNOB):
            placement = schedule.accumulators.get(name.removeprefix(ACC_KNOB), "separate")
            env[name] = PLACEMENTS.index(placement)
    total = max(problem.objective.eval(env), 1)
    tree = _walk(problem.heg, env, schedule, 1, total, True, {}, "compute")
    if sim is None or not sim.trace_events or not sim.us:
        return tree
    names = [p.name for p in pipes(problem.heg)]
    busy = pipe_busy(sim.trace_events, names, sim.cycles / sim.us)
    return _attach(tree, busy, "")


def pipe_busy(
    events: tuple[dict[str, object], ...], pipe_names: list[str], cycles_per_us: float
) -> dict[tuple[str, str], tuple[float, str]]:
    """(pipe, stage) -> (busy cycles per core, engines) from a simulation's trace."""
    engines: dict[tuple[int, int], str] = {}
    cores: set[int] = set()
    known = set(pipe_names)
    root = pipe_names[0] if pipe_names else ""
    sums: dict[tuple[str, str], float] = {}
    who: dict[tuple[str, str], set[str]] = {}
    for ev in events:
        if ev.get("ph") == "M" and ev.get("name") == "thread_name":
            engines[(int(ev["pid"]), int(ev["tid"]))] = str(ev["args"]["name"])  # type: ignore[call-overload,index]
    for ev in events:
        key = (int(ev.get("pid", 0)), int(ev.get("tid", 0)))  # type: ignore[call-overload]
        if ev.get("ph") != "X" or key not in engines:
            continue
        cores.add(key[0])
        args = ev.get("args")
        loops = str(args.get("loops", "")) if isinstance(args, dict) else ""
        scopes = (Scope(v.removesuffix("_id")).key for v in reversed(loops.split(">")))
        pipe = next((key for key in scopes if key in known), root)
        slot = (pipe, _stage(str(ev["name"])))
        sums[slot] = sums.get(slot, 0.0) + float(ev["dur"]) * cycles_per_us  # type: ignore[arg-type]
        who.setdefault(slot, set()).add(engines[key])
    n = max(len(cores), 1)
    return {k: (v / n, "+".join(sorted(who[k]))) for k, v in sums.items()}


def _stage(what: str) -> str:
    """The pipe stage a traced statement belongs to, from the simulator's label."""
    verb, _, rest = what.partition(" ")
    if verb == "compute":
        return "compute"
    if verb == "write" or (verb in ("send", "receive") and rest.startswith("gather")):
        return "store"
    return "load"


def _nodes(item: HegItem) -> list[HegItem]:
    return [item, *(n for c in item.children for n in _nodes(c))]


def _attach(item: HegItem, busy: dict[tuple[str, str], tuple[float, str]], pipe: str) -> HegItem:
    """`item` and its subtree with the simulated figures of `busy` (see `pipe_busy`)."""
    if item.kind == "pipe":
        load, body, store = item.children
        leaves = [c for c in body.children if c.kind == "compute"] if body.kind == "seq" else []
        compute = busy.get((item.name, "compute"))
        if body.kind != "seq":
            body = _with(_attach(body, busy, item.name), compute)
        elif len(leaves) == 1:
            body = dataclasses.replace(
                body,
                children=tuple(
                    _with(c, compute) if c is leaves[0] else _attach(c, busy, item.name)
                    for c in body.children
                ),
            )
        else:
            body = _with(_attach(body, busy, item.name), compute)
        children = (
            _with(load, busy.get((item.name, "load"))),
            body,
            _with(store, busy.get((item.name, "store"))),
        )
        return dataclasses.replace(item, children=children)
    return dataclasses.replace(item, children=tuple(_attach(c, busy, pipe) for c in item.children))


def _with(item: HegItem, figure: tuple[float, str] | None) -> HegItem:
    if figure is None:
        return item
    return dataclasses.replace(item, simulated=figure[0], engine=figure[1])


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
