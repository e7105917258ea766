"""Reify tile values into virtual buffers (paper §2.3).

Which values get a buffer, and why:

* a loaded tile (`load`: the reader produces it, compute consumes it);
* a stored tile (`store`: compute produces it, the writer drains it);
* a loop-carried value (`state`: its init, iteration argument and result share one
  buffer; its next value joins them when nothing else in the iteration reads it; a
  loop whose init is the result of the loop before carries on in that loop's buffer);
* a partial result sent to the owner of a split reduction (`gather_out`) and the
  partials arriving there (`gather_in`); a reduction over the gathered axis folds the
  partials one by one, so its accumulator is a `state` buffer;
* any other computed value read by two or more operations, or read inside a loop it
  was computed outside of (`compute`).

Everything else is computed inside the expression of its single consumer and needs no
storage (it lives in the compute engine's destination registers). `x[..., None]` is a
view of its operand, not a new value.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

from loom.dataflow.layout import ValueLayout, infer_layouts
from loom.ir.buffers import VirtualBuffer
from loom.ir.scope import Scope
from loom.ir.tile import (
    ExpandDims,
    ForLoop,
    Full,
    Gather,
    If,
    Load,
    Op,
    Reduce,
    Store,
    TileProgram,
    Value,
)


@dataclass
class _Site:
    op: Op
    position: int
    scope: Scope
    loops: tuple[ForLoop, ...]


@dataclass
class _Analysis:
    sites: list[_Site] = field(default_factory=list)
    defs: dict[str, _Site] = field(default_factory=dict)
    uses: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    loop_end: dict[int, int] = field(default_factory=dict)
    root: dict[str, str] = field(default_factory=dict)
    values: dict[str, Value] = field(default_factory=dict)


READ = ("reader", "compute")
WRITE = ("compute", "writer")
RECEIVE = ("writer", "compute")
COMPUTE = ("compute", "compute")


class Reifier:
    def __init__(self, program: TileProgram) -> None:
        self.program = program
        self.layouts: dict[str, ValueLayout] = infer_layouts(program)
        self.a = _Analysis()
        self.buffers: list[VirtualBuffer] = []
        self.owned: dict[str, str] = {}  # value -> buffer name
        self.yields: dict[str, _Site] = {}
        self.sites_of: dict[str, _Site] = {}

    # ----- analysis --------------------------------------------------------------
    def _walk(self, ops: tuple[Op, ...], loops: tuple[ForLoop, ...]) -> None:
        for op in ops:
            site = _Site(op, len(self.a.sites), Scope.of(loops), loops)
            self.a.sites.append(site)
            for r in op.results():
                self.a.defs[r.name] = site
                self.a.values[r.name] = r
            if isinstance(op, ExpandDims):
                self.a.root[op.results()[0].name] = self._root(op.operands()[0].name)
            elif not isinstance(op, ForLoop):
                for o in op.operands():
                    self.a.uses[self._root(o.name)].append(site)
            if isinstance(op, ForLoop):
                for c in op.carried:
                    self.a.defs[c.arg.name] = site
                    self.a.values[c.arg.name] = c.arg
                self._walk(op.body, (*loops, op))
                end = len(self.a.sites) - 1
                self.a.loop_end[id(op)] = end
                for c in op.carried:
                    # the next value is copied into the state buffer at the iteration end
                    self.yields[self._root(c.next.name)] = _Site(
                        op, end, Scope.of((*loops, op)), (*loops, op)
                    )
            elif isinstance(op, If):
                self._walk(op.body, loops)

    def _root(self, name: str) -> str:
        return self.a.root.get(name, name)

    def _aliases(self, root: str) -> tuple[str, ...]:
        return (root, *sorted(v for v, r in self.a.root.items() if r == root and v != root))

    def _read_sites(self, name: str) -> list[_Site]:
        """Where `name` is really read: an inlined consumer reads it where its own
        result is consumed. So does a consumer whose result lives in a buffer the
        compute engine cannot read back (a stored value also read by another op, e.g.
        `red` stored and `x - red`): the lowering rebuilds that result inline wherever
        compute reads it, from the same operand blocks."""
        sites: list[_Site] = []
        for use in self.a.uses.get(name, ()):
            results = use.op.results() if not isinstance(use.op, ForLoop) else ()
            if results and results[0].name not in self.owned:
                sites.extend(self._read_sites(results[0].name))
                continue
            sites.append(use)
            if results and self._unreadable(results[0].name):
                again = self._read_sites(results[0].name)
                sites.extend(s for s in again if not isinstance(s.op, Store))
        return sites

    def _unreadable(self, name: str) -> bool:
        """Whether `name`'s buffer is one compute writes but never reads (a store's)."""
        owner = next((b for b in self.buffers if b.name == self.owned.get(name)), None)
        return owner is not None and owner.consumer != "compute"

    def _lifetime(self, vb: VirtualBuffer, site: _Site) -> VirtualBuffer:
        if vb.role == "gather_out":  # a copy made and sent at the gather itself
            return replace(vb, birth=site.position, death=site.position)
        defs = [self.a.defs[v] for v in vb.values if v in self.a.defs]
        birth = min([site.position] + [d.position for d in defs])
        death = birth
        for name in vb.values:
            def_loops = self.a.defs[name].loops if name in self.a.defs else ()
            for use in self._read_sites(name):
                end = use.position
                outer = [loop for loop in use.loops if loop not in def_loops]
                if outer:  # read in every iteration of a loop it was defined outside
                    end = max(end, self.a.loop_end[id(outer[0])])
                death = max(death, self._merge_end(end, use))
        return replace(vb, birth=birth, death=death)

    def _per_partial(self, site: _Site) -> bool:
        """Whether `site` runs once per gathered partial (an op on a gathered value, or
        a fold over the gathered axis) on the owner of a split reduction."""
        results = site.op.results() if not isinstance(site.op, ForLoop) else ()
        return (
            bool(results)
            and results[0].name in self.layouts
            and (
                self.layouts[results[0].name].gathered
                or (
                    isinstance(site.op, Reduce)
                    and site.op.axis == 0
                    and self.layouts[site.op.operand.name].gathered
                )
            )
        )

    def _merge_end(self, end: int, use: _Site) -> int:
        """The owner merges partials in passes that each loop over all partials, so a
        value read by a per-partial op stays live until the last per-partial op."""
        if not self._per_partial(use):
            return end
        return max(end, max(s.position for s in self.a.sites if self._per_partial(s)))

    def _gather_operand_lifetime(self, vb: VirtualBuffer) -> VirtualBuffer:
        """The owner's own partial is partial 0 of every merge pass, so a gathered
        operand lives as long as the gathered result it stands for."""
        if vb.role == "gather_out":
            return vb
        death = vb.death
        for use in (u for v in vb.values for u in self.a.uses.get(v, ())):
            if isinstance(use.op, Gather):
                result = use.op.result.name
                death = max([death] + [b.death for b in self.buffers if result in b.values])
        return replace(vb, death=death)

    # ----- buffers -----------------------------------------------------------------
    def _add(
        self,
        name: str,
        values: tuple[str, ...],
        role: str,
        engines: tuple[str, str],
        site: _Site,
        tensor: str = "",
        dtype: str = "",
    ) -> None:
        if name in {b.name for b in self.buffers}:
            name = f"{name}_{role}"
        producer, consumer = engines
        layout = self.layouts[values[0]].layout
        dtype = dtype or self.a.values[values[0]].dtype
        vb = VirtualBuffer(
            name=name,
            values=values,
            role=role,
            producer=producer,
            consumer=consumer,
            layout=layout,
            dtype=dtype,
            scope=site.scope,
            tensor=tensor,
        )
        self.buffers.append(vb)
        self.sites_of[name] = site
        for v in values:
            self.owned.setdefault(v, name)

    def run(
        self,
    ) -> tuple[dict[str, ValueLayout], tuple[VirtualBuffer, ...], tuple[str, ...], dict[str, int]]:
        self._walk(self.program.body, ())
        for site in self.a.sites:
            self._reify(site)
        self._reify_shared_values()
        self.buffers = [self._lifetime(vb, self.sites_of[vb.name]) for vb in self.buffers]
        self.buffers = [self._gather_operand_lifetime(vb) for vb in self.buffers]
        inlined = tuple(
            name
            for name, site in self.a.defs.items()
            if name not in self.owned
            and name not in self.a.root
            and not isinstance(site.op, ForLoop)
        )
        return self.layouts, tuple(self.buffers), inlined, self._rebuilt()

    def _rebuilt(self) -> dict[str, int]:
        """How many more times than once the lowering evaluates each op's result. An
        inlined value is rebuilt wherever its consumer is evaluated, once per operand it
        fills (`x * x` of an inlined `x` computes `x` twice); a value in a store buffer
        that other ops also read (`_unreadable`) is computed into it once and rebuilt
        inline where each of them is evaluated (`loom.lower.exprs`)."""
        memo: dict[str, int] = {}
        extra = {}
        for name in self.a.defs:
            count = self._evaluations(name, memo)
            if count > 1 and self._computed(name) and name not in self.a.root:
                extra[name] = count - 1
        return extra

    def _evaluations(self, name: str, memo: dict[str, int]) -> int:
        """Times the lowered compute evaluates `name` (`_rebuilt`)."""
        if name in memo:
            return memo[name]
        memo[name] = 1  # a loop's carried value reaches itself: its statement, once
        owned = name in self.owned
        count = 1 if owned else 0
        if not owned or self._unreadable(name):
            for use in self.a.uses.get(name, ()):
                if isinstance(use.op, Store | ForLoop | Gather) or not use.op.results():
                    count += 0 if owned else 1
                    continue
                result = self._root(use.op.results()[0].name)
                rebuilt = result not in self.owned or self._unreadable(result)
                count += self._evaluations(result, memo) if rebuilt else 1
        memo[name] = max(count, 1)
        return memo[name]

    def _computed(self, name: str) -> bool:
        """Whether `name` is the result of an op the compute engine evaluates."""
        site = self.a.defs.get(name)
        return site is not None and not isinstance(site.op, Load | ForLoop | Gather)

    def _reify(self, site: _Site) -> None:
        op = site.op
        match op:
            case Load(result=r, tensor=t):
                self._add(r.name, self._aliases(r.name), "load", READ, site, t)
            case ForLoop(carried=carried):
                for c in carried:
                    next_root = self._root(c.next.name)
                    values = [c.init.name, c.arg.name, c.result.name]
                    if not self.a.uses.get(next_root) and next_root not in self.owned:
                        values.append(next_root)
                    else:
                        self.a.uses[next_root].append(self.yields[next_root])
                    names = tuple(n for v in values for n in self._aliases(v))
                    if not self._chain(c.init.name, names):
                        self._add(c.init.name, names, "state", COMPUTE, site)
            case Gather(result=r, operand=x):
                self._add(f"{x.name}_partial", (x.name,), "gather_out", WRITE, site)
                self._add(r.name, self._aliases(r.name), "gather_in", RECEIVE, site)
            case Reduce(result=r, operand=x, axis=0) if self.layouts[x.name].gathered:
                self._add(r.name, self._aliases(r.name), "state", COMPUTE, site)
            case Store(tensor=t, value=v):
                root = self._root(v.name)
                stored = (
                    (v.name,)
                    if root in self.owned or root not in self.a.defs
                    else self._aliases(root)
                )
                self._add(f"{t}_out", stored, "store", WRITE, site, t, v.dtype)
            case _:
                pass

    def _chain(self, init: str, names: tuple[str, ...]) -> bool:
        """Carry a value on in the state buffer of the loop before, when its init is
        that loop's result and nothing else reads it (causal attention's key loop split
        in two: the blocks below the diagonal, then the diagonal): the second loop pops
        the block the first left, as the first's own iterations do. Returns whether
        `init` was such a result."""
        owner = self.owned.get(init)
        site = self.a.defs.get(init)
        if owner is None or site is None or not isinstance(site.op, ForLoop):
            return False
        if self.a.uses.get(self._root(init)):
            return False  # read again after the next loop overwrites its block
        at = next(i for i, b in enumerate(self.buffers) if b.name == owner)
        vb = self.buffers[at]
        self.buffers[at] = replace(vb, values=vb.values + tuple(n for n in names if n != init))
        for n in names:
            self.owned.setdefault(n, owner)
        return True

    def _reify_shared_values(self) -> None:
        for name, site in self.a.defs.items():
            if name in self.owned or name in self.a.root or isinstance(site.op, ForLoop | Full):
                continue
            uses = self.a.uses.get(name, [])
            outside = any(loop not in site.loops for use in uses for loop in use.loops)
            if len({id(u.op) for u in uses}) >= 2 or outside:
                self._add(name, self._aliases(name), "compute", COMPUTE, site)


def reify(
    program: TileProgram,
) -> tuple[dict[str, ValueLayout], tuple[VirtualBuffer, ...], tuple[str, ...], dict[str, int]]:
    """Virtual buffers of `program`, the layout of every value, the inlined values and
    the values the lowering evaluates more than once (`Reifier._rebuilt`)."""
    return Reifier(program).run()
