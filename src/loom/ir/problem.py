"""The symbolic optimisation problem of one candidate (paper §2.6, stage 06).

The Hierarchical Execution Graph (HEG) of a candidate is

    g ::= pipe(load, g', store) | for(i, g') | compute | g ; g

with primitive latency terms at the leaves (transfers and compute operations, each an
expression of the tile symbols). Every pipe node has two pipeline knobs, solver
booleans b_load and b_store; the latency of the whole graph, T(x, b), is an expression of
the tile symbols x and the knobs b. Constraints say which (x, b) are legal.

The latency of a node is assembled bottom-up (paper §2.6, eqs. 1–3):

    T(g1 ; g2)             = T(g1) + T(g2)
    T(for(i, g))           = i * T(g)
    T(for(i, p)), p a pipe = (i - 1) * T(p) + (l + m + s)
        (an overlapped pipe repeats at its steady-state rate, but the first load and the
        last body and store of the loop are not hidden behind anything: software
        pipelining fills and drains once per loop); with a floor D on the banks' time
        of one pass (`Pipe.dram`): max((i - 1) * T(p without D) + (l + m + s),
        (i - 1) * D + l + s), the first body hidden behind the next pass's loads
    T(pipe(l, m, s)), b = (b_load, b_store):
        (0, 0): l + m + s        (0, 1): max(l + m, s)
        (1, 0): max(l, m + s)    (1, 1): max(l, m, s)
        with (0, 0) max(l + m, m + s) when the store's engine does nothing else in the
        pass (`Pipe.store_apart`)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loom.ir.candidate import Candidate
from loom.ir.scope import Scope
from loom.symbolic import Cond, Const, Expr, Sym, add, maximum, minimum, select


@dataclass(frozen=True)
class Term:
    """A primitive latency term, traceable to the source (`what`)."""

    kind: (
        str  # dram_read | multicast | dram_write | gather | matmul | eltwise | reduce | pack | ...
    )
    what: str
    cycles: Expr
    floor: Expr | None = None
    """The least `cycles` can be under any copy mode and group area, where it depends on
    them (a compute overlap sized by a load stage); None when it does not. The ranking's
    class bound (`loom.solve.bounds`) charges it."""


@dataclass(frozen=True)
class HegNode:
    name: str


@dataclass(frozen=True)
class Leaf(HegNode):
    """A sequence of compute operations."""

    terms: tuple[Term, ...]


@dataclass(frozen=True)
class Stage(HegNode):
    """The load or store stage of a pipe: transfers issued by a data-movement engine."""

    terms: tuple[Term, ...]
    cycles: Expr
    floor: Expr = field(default_factory=lambda: Const(0))
    """At most `cycles` for every assignment, and the same for every copy pattern that
    moves the same blocks on the same engines (`loom.model.primitives.dram_read_floor`):
    what a bound shared by such candidates may charge for the stage."""


@dataclass(frozen=True)
class Pipe(HegNode):
    load: Stage
    body: HegNode
    store: Stage
    b_load: Sym
    b_store: Sym
    scope: Scope = field(default_factory=Scope)
    """The scope this pipe runs (its `name` is the scope's text form)."""
    unheld: Expr = field(default_factory=lambda: Const(0))
    """Load time hidden behind the body when single-slot loads (b_load = 0) one engine
    issues in turn each free their slot before the body ends, so the engine fetches the
    next block while the body runs (`loom.model.slots.Slots.unheld`)."""
    dram: Expr = field(default_factory=lambda: Const(0))
    """The least one pass takes for its DRAM traffic when its store stage overlaps its
    loads (a writer that only stores drains a wave's result while the reader loads the
    next wave's blocks): the banks' time for all of it, or the loading engine's reads
    slowed by the stores (`loom.model.banks.Banks.pass_dram`); 0: no floor."""
    stall: Expr = field(default_factory=lambda: Const(0))
    """Added to every pass: the reads the previous pass's stores delay where nothing
    hides the wait (`loom.model.banks.Banks.pass_dram`)."""
    chain: Expr = field(default_factory=lambda: Const(0))
    """The least one pass takes when the engine that stores also loads in this scope: it
    loads, waits for the body, then stores, in program order, so no buffer overlaps
    those (`loom.model.stores.Stores.store_chain`); 0: no floor."""
    store_apart: bool = False
    """The store stage's engine does nothing else in the pass (none of its loads, its
    inner loops' or its gathers): with one block each way (b_load = b_store = 0) it
    writes pass i while the loading engine fetches pass i + 1 (from when the body pops
    its blocks), so only the next body waits for the write: that pass is
    max(l + m, m + s), not l + m + s."""


@dataclass(frozen=True)
class For(HegNode):
    trip: Expr
    body: HegNode
    steady: bool = False
    """The loop's pipe is primed when the loop starts (its engines fetched its first
    block during the enclosing loop's previous pass), so every iteration runs at the
    pipe's steady rate; the one exposed fill is charged where the builder says
    (`loom.model.steady`)."""


@dataclass(frozen=True)
class Seq(HegNode):
    children: tuple[HegNode, ...]


@dataclass(frozen=True)
class Constraint:
    name: str
    cond: Cond
    text: str
    """What it means, in source terms."""


@dataclass(frozen=True)
class Problem:
    candidate: Candidate
    heg: HegNode
    objective: Expr
    """Modeled cycles T(x, b)."""
    domains: dict[str, tuple[int, ...]]
    """Legal values of every symbol (tile sizes and knobs)."""
    symbols: dict[str, Sym]
    constraints: tuple[Constraint, ...]
    l1_bytes: Expr
    dram_bytes: Expr
    """DRAM traffic of the whole kernel (all cores): the tie-breaker between equal latencies."""
    flops: int
    infeasible_reason: str = ""
    """Set when the domains are empty before solving (no legal tile at all)."""
    split_domains: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """The tile sizes' values before any constraint filters them, and the accumulators'
    placements: they depend only on the cores per grid axis and the split-reduction
    axes, so a bound minimised over them holds for every candidate that shares those."""

    @property
    def tile_names(self) -> tuple[str, ...]:
        return tuple(n for n, s in self.symbols.items() if s.kind == "tile")

    @property
    def knob_names(self) -> tuple[str, ...]:
        return tuple(n for n, s in self.symbols.items() if s.kind == "knob")

    def admits(self, env: dict[str, int]) -> bool:
        """Is `env` a legal assignment: a value of its domain for every variable, every
        constraint met?"""
        if set(env) != set(self.domains) or any(env[n] not in self.domains[n] for n in env):
            return False
        return all(c.cond.eval(env) for c in self.constraints)


def latency(node: HegNode) -> Expr:
    """T of a node (the module docstring's equations). Nodes are immutable and the
    builder asks for the same subtrees' latencies again as it assembles their parents,
    so each node keeps its own once computed."""
    cached: Expr | None = node.__dict__.get("_latency")
    if cached is None:
        cached = _latency(node)
        object.__setattr__(node, "_latency", cached)
    return cached


def _latency(node: HegNode) -> Expr:
    match node:
        case Leaf(terms=terms):
            return add(*(t.cycles for t in terms)) if terms else Const(0)
        case Stage(cycles=cycles):
            return cycles
        case Seq(children=children):
            return add(*(latency(c) for c in children)) if children else Const(0)
        case For(trip=trip, body=Pipe() as pipe, steady=True):
            return trip * latency(pipe)
        case For(trip=trip, body=Pipe(dram=d) as pipe) if d != Const(0):
            # bound by the banks, the first body runs beside the next pass's loads: the
            # loop's fill is its first load and last store, its body hidden
            edges = latency(pipe.load) + latency(pipe.store)
            return maximum(
                (trip - 1) * _pass(pipe, False) + sequential(pipe), (trip - 1) * d + edges
            )
        case For(trip=trip, body=Pipe() as pipe):
            return (trip - 1) * latency(pipe) + sequential(pipe)
        case For(trip=trip, body=body):
            return trip * latency(body)
        case Pipe():
            return _pass(node, True)
    raise TypeError(f"not an HEG node: {node!r}")


def _pass(pipe: Pipe, banks: bool) -> Expr:
    """One pass of a pipe at its steady-state rate; `banks`: at least the banks' time for
    the pass's DRAM traffic (`Pipe.dram`)."""
    ell, m, s = latency(pipe.load), latency(pipe.body), latency(pipe.store)
    bl, bs, free = pipe.b_load, pipe.b_store, pipe.unheld
    serial = ell + m if free == Const(0) else ell + m - minimum(free, ell)
    overlapped = select(
        bl.eq(1),
        select(bs.eq(1), maximum(ell, m, s), maximum(ell, m + s)),
        select(
            bs.eq(1), maximum(serial, s), maximum(serial, m + s) if pipe.store_apart else serial + s
        ),
    )
    if pipe.stall != Const(0):
        overlapped = overlapped + pipe.stall
    floors = [f for f in (pipe.dram if banks else Const(0), pipe.chain) if f != Const(0)]
    return maximum(overlapped, *floors) if floors else overlapped


def sequential(pipe: Pipe) -> Expr:
    """One pass of a pipe with nothing overlapped: load, body, then store."""
    return latency(pipe.load) + latency(pipe.body) + latency(pipe.store)


def pipes(node: HegNode) -> list[Pipe]:
    """Every pipe node, outermost first."""
    match node:
        case Pipe(body=body):
            return [node, *pipes(body)]
        case Seq(children=children):
            return [p for c in children for p in pipes(c)]
        case For(body=body):
            return pipes(body)
    return []
