"""Build one candidate's Problem: latency T(x, b), symbol domains and constraints Φ.

Constraints (paper §2.6):

* domains and alignment: a tile size is a multiple of its alignment (32 for the tile
  dimensions). A loop tile divides its extent — a reduction must not see padding. A
  grid axis is padded to whole waves instead: its blocks are independent, so blocks
  past the extent are computed on zero padding and discarded. Of the tile sizes that
  give the same number of waves only the smallest is kept (a larger one only adds
  padding work and L1);
* a split reduction's axis is fully spatial (one block per core, no waves, no padding);
* an inner loop over a tile of another tile divides it;
* primitive validity: a block holds one batch slice (the DRAM layout folds batches
  into rows, so a block of several slices would not be contiguous);
* the L1 footprint — every allocation's tiles x tile bytes x depth, where a load
  (store) buffer gets a second block when its pipe's b_load (b_store) is on, and a matmul
  accumulator's state has 2, 1 or 0 blocks for its placement knob 0, 1, 2 (separate,
  l1, output: `loom.ir.buffers.PLACEMENTS`) — fits the usable L1;
* the dataflow buffers — one per allocation that keeps a block (an accumulator in its
  output's block keeps none) — are at most the architecture's `dataflow_buffers` (a
  core holds that many circular buffers, whatever their size).

Univariate constraints also filter the domains up front; they stay in the list so the
explanation can still name them.
"""

from __future__ import annotations

import functools
import itertools

from loom.arch import Arch
from loom.ir.buffers import BufferedProgram
from loom.ir.candidate import Candidate
from loom.ir.problem import Constraint, Problem, latency, pipes
from loom.ir.scope import Scope
from loom.ir.tile import ForLoop, Load, Store, accesses, walk
from loom.model.core import OpTerms, knob, placement_knob
from loom.model.domains import grid_domain, tile_domain
from loom.model.heg import HegBuilder
from loom.symbolic import Const, Expr, Sym, add, cmp, minimum, mod

Legality = tuple[dict[str, tuple[int, ...]], list[Constraint], Expr, str]
"""Domains, constraints, L1 bytes and why a domain is empty (`ProblemBuilder.legality`)."""
Legal = dict[tuple[object, ...], tuple[Legality, dict[str, tuple[int, ...]]]]
"""Legality and the unfiltered domains (`Problem.split_domains`) by split and knob
domains, kept across the candidates of one compile: they depend on nothing else."""


class ProblemBuilder:
    def __init__(
        self,
        buffered: BufferedProgram,
        candidate: Candidate,
        arch: Arch,
        fidelity: str,
        flops: int,
        legal: Legal | None = None,
        ops: OpTerms | None = None,
    ) -> None:
        self.b = buffered
        self.program = buffered.program
        self.c = candidate
        self.arch = arch
        self.fidelity = fidelity
        self.flops = flops
        self.legal = legal
        self.ops = ops

    def build(self) -> Problem:
        builder = HegBuilder(self.b, self.c, self.arch, self.fidelity, self.ops)
        heg = builder.build()
        knobs: dict[str, tuple[int, ...]] = {}
        symbols: dict[str, Sym] = {}
        for pipe in pipes(heg):
            for sym, stage in ((pipe.b_load, pipe.load), (pipe.b_store, pipe.store)):
                symbols[sym.name] = sym
                knobs[sym.name] = (0, 1) if stage.terms else (0,)
        if self.c.stores_late:  # two store blocks, the writer's stores one wave late
            knobs[knob("b_store", Scope.grid()).name] = (1,)
        for acc in self.b.accumulators:
            symbols[acc.knob] = placement_knob(acc)
        knobs.update(self.accumulator_knobs())
        key = (tuple(sorted(self.c.spatial.items())), self.c.gather_axes, tuple(knobs.items()))
        cache = self.legal if self.legal is not None else {}
        if key not in cache:
            cache[key] = (self.legality(knobs), self.tile_domains | self.accumulator_knobs())
        (domains, constraints, l1, reason), split_domains = cache[key]
        fixed = {name: values[0] for name, values in knobs.items() if len(values) == 1}
        symbols = {s.name: s for s in self.program.tile_syms} | symbols
        return Problem(
            candidate=self.c,
            heg=heg,
            objective=latency(heg).subs(fixed),
            domains=domains,
            symbols=symbols,
            constraints=tuple(constraints),
            l1_bytes=l1.subs(fixed),
            dram_bytes=add(*builder.traffic),
            flops=self.flops,
            infeasible_reason=reason,
            split_domains=split_domains,
        )

    def legality(self, knobs: dict[str, tuple[int, ...]]) -> Legality:
        """Domains (filtered by the univariate constraints), constraints, L1 bytes, and
        why a domain is empty ('' if none is)."""
        domains = self.tile_domains | knobs
        l1 = self._l1_bytes(domains)
        constraints = self._constraints(l1, self._buffer_count(domains))
        reason = ""
        for con in constraints:
            names = con.cond.free_names()
            if not names and not con.cond.eval({}) and not reason:
                reason = f"not satisfiable: {con.text}"
            if len(names) == 1:
                (name,) = names
                domains[name] = tuple(v for v in domains[name] if con.cond.eval({name: v}))
                if not domains[name] and not reason:
                    reason = f"no value of {name} satisfies: {con.text}"
        empty = [n for n, d in domains.items() if not d]
        if empty and not reason:
            reason = f"no legal value of {', '.join(empty)}"
        return domains, constraints, l1, reason

    @functools.cached_property
    def tile_domains(self) -> dict[str, tuple[int, ...]]:
        """Every tile size's values before the constraints filter them: they depend
        only on the cores per grid axis and the split-reduction axes."""
        extents = self._extents()
        domains = {s.name: tile_domain(s, extents.get(s.name)) for s in self.program.tile_syms}
        for axis in self.program.grid:
            name = axis.tile.name
            split = name in self.c.gather_axes
            domains[name] = grid_domain(axis.tile, axis.extent, self.c.spatial[name], split)
        return domains

    def accumulator_knobs(self) -> dict[str, tuple[int, ...]]:
        """The placement knob of every accumulator, over the placements it may take."""
        return {acc.knob: tuple(range(len(acc.placements))) for acc in self.b.accumulators}

    def _extents(self) -> dict[str, int]:
        extents = {a.tile.name: a.extent for a in self.program.grid}
        for op in walk(self.program.body):
            if isinstance(op, ForLoop):
                span = op.end - op.begin
                extents.setdefault(
                    op.tile.name, span.value if isinstance(span, Const) else op.tile.upper
                )
        return extents

    def _l1_bytes(self, domains: dict[str, tuple[int, ...]]) -> Expr:
        terms = []
        for alloc in self.b.allocations:
            depth: Expr = Const(alloc.base_depth)
            if alloc.role in ("load", "store"):
                k = knob("b_load" if alloc.role == "load" else "b_store", alloc.scope)
                if domains.get(k.name, (0,)) != (0,):
                    depth = depth + k
            acc = self.b.accumulator(alloc.name)
            if acc is not None and domains.get(acc.knob, (0,)) != (0,):
                depth = depth - placement_knob(acc)  # 2, 1 or 0 blocks
            tile_bytes = self.arch.tile.bytes(
                alloc.dtype if alloc.dtype in self.arch.tile.dtypes else "fp32"
            )
            terms.append(alloc.tiles * tile_bytes * depth)
        return add(*terms)

    def _buffer_count(self, domains: dict[str, tuple[int, ...]]) -> Expr:
        """Dataflow buffers per core: every allocation but an accumulator whose
        placement leaves it no block of its own (depth 0, as `_l1_bytes` counts it)."""
        terms: list[Expr] = []
        for alloc in self.b.allocations:
            acc = self.b.accumulator(alloc.name)
            if acc is not None and domains.get(acc.knob, (0,)) != (0,):
                terms.append(minimum(Const(alloc.base_depth) - placement_knob(acc), 1))
            else:
                terms.append(Const(1))
        return add(*terms)

    def _divides(self, op: ForLoop) -> list[Constraint]:
        """The loop's tile divides its extent. An extent that moves with a grid tile
        (`hl.tile(0, tile_m.end)`: (id + 1) tile_m, causal attention) is affine in the
        grid indices: it divides every value when it divides those at index 0 and 1."""
        span = op.end - op.begin
        indices = {a.index.name for a in self.program.grid} & span.free_names()
        spans = [span]
        if indices:
            at = [span.subs({n: Const(v) for n in indices}) for v in (0, 1)]
            spans = [e for e in at if e != Const(0)]
        return [
            Constraint(
                f"divides_{op.tile.name}" + (f"_{k}" if k else ""),
                cmp("==", mod(e, op.tile), 0),
                f"{op.tile.name} divides the loop extent {e}",
            )
            for k, e in enumerate(spans)
        ]

    def _constraints(self, l1: Expr, buffers: Expr) -> list[Constraint]:
        out: list[Constraint] = []
        for axis in self.program.grid:
            name, cores = axis.tile.name, self.c.spatial[axis.tile.name]
            if name in self.c.gather_axes:
                out.append(
                    Constraint(
                        f"split_{name}",
                        cmp("==", axis.num_tiles, cores),
                        f"the split reduction over {name} runs one block per core: "
                        f"{axis.extent}/{name} = {cores} cores",
                    )
                )
        for op in walk(self.program.body):
            if isinstance(op, ForLoop) and not isinstance(op.end - op.begin, Const):
                out.extend(self._divides(op))
        for sym in self._batch_tiles():
            out.append(
                Constraint(
                    f"batch_{sym.name}",
                    cmp("==", sym, 1),
                    f"a block holds one batch slice ({sym.name} = 1): batches are folded into "
                    "DRAM rows",
                )
            )
        out.append(
            Constraint(
                "l1",
                cmp("<=", l1, self.arch.l1_usable_bytes),
                f"L1 footprint <= {self.arch.l1_usable_bytes} usable bytes per core",
            )
        )
        limit = self.arch.dataflow_buffers
        out.append(
            Constraint(
                "dataflow_buffers",
                cmp("<=", buffers, limit),
                f"dataflow buffers ({buffers}) <= the {limit} one core of {self.arch.name} "
                "holds; a kernel with fewer distinct loads and shared intermediates needs "
                "fewer",
            )
        )
        return out

    def _batch_tiles(self) -> list[Sym]:
        found: dict[str, Sym] = {}
        for op in accesses(self.program.body):
            if isinstance(op, Load | Store):
                for w in op.window[:-2]:
                    if isinstance(w.size, Sym) and w.size.upper > 1:
                        found[w.size.name] = w.size
        return list(found.values())


def build_problem(
    buffered: BufferedProgram,
    candidate: Candidate,
    arch: Arch,
    fidelity: str,
    flops: int,
    legal: Legal | None = None,
    ops: OpTerms | None = None,
) -> Problem:
    """`legal`, `ops`: what the candidates of one compile share (`Legal`, the ops' compute
    terms), filled as they go."""
    return ProblemBuilder(buffered, candidate, arch, fidelity, flops, legal, ops).build()


def check_feasible(buffered: BufferedProgram, candidate: Candidate, arch: Arch) -> str:
    """'' when some legal block sizes exist for `candidate`, else why not.

    Cheap (no latency model): the L1 footprint grows with every tile size, so the
    smallest legal tiles with no double buffering are tried first; only if that fails is
    the whole (small) domain product searched.
    """
    builder = ProblemBuilder(buffered, candidate, arch, arch.matmul.default_fidelity, 0)
    domains, constraints, _, reason = builder.legality(builder.accumulator_knobs())
    if reason:
        return reason
    names = list(domains)
    smallest = {n: domains[n][0] for n in names}
    if all(c.cond.eval(smallest) for c in constraints):
        return ""
    for values in itertools.product(*(domains[n] for n in names)):
        env = dict(zip(names, values, strict=True))
        if all(c.cond.eval(env) for c in constraints):
            return ""
    failing = [c.text for c in constraints if not c.cond.eval(smallest)]
    return "even the smallest legal tiles violate: " + "; ".join(failing)
