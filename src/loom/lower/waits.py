"""Consumer scopes of the compute stream: which `Wait` encloses which statements.

The compute stream is first built as a list of *steps* per nesting level, each step a
statement plus the keys (buffered value instances) it reads. A key owned by the level
(its block is produced once per pass through this level) gets one `Wait` spanning its
first to its last reader, because a waited block is popped exactly once when its scope
ends. Scopes must nest like Python `with` blocks. When a scope opened inside another
outlives it, the inner one opens earlier, with the outer one, if its block is already
filled by then (compute produced it at this level before the outer scope opens: holding
a filled block costs no L1 its lifetime does not already count). Otherwise the outer one
is extended (its block is held a little longer). Extending is what the buffer lifetimes
do not foresee: a buffer that shares the outer block's storage and is produced inside
the extension would wait for a block its own consumer holds (a deadlock).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from loom.ir.program import Compute, Reserve, Stmt, Wait, walk_stmts
from loom.lower.exprs import Built


@dataclass(frozen=True)
class Step:
    stmt: Stmt
    reads: frozenset[str] = field(default_factory=frozenset)


@dataclass
class _Scope:
    key: str
    first: int
    last: int


def produce(cb: str, built: Built) -> Step:
    """Reserve a block of `cb`, store the expression into it, push it."""
    return Step(Reserve(cb, (Compute(cb, built.expr),)), built.reads)


def _writes(stmt: Stmt, cb: str) -> bool:
    return any(isinstance(s, Reserve) and s.buffer == cb for s in walk_stmts((stmt,)))


def _filled_at(steps: list[Step], scope: _Scope, cb: str) -> int | None:
    """The step after the one of this level that fills `scope`'s block, or None when
    another engine or an outer level fills it (then waiting earlier could block)."""
    for j in range(scope.first - 1, -1, -1):
        if _writes(steps[j].stmt, cb):
            return j + 1
    return None


def _scopes(steps: list[Step], owned: Iterable[str], cb_of: Mapping[str, str]) -> list[_Scope]:
    owned_set = set(owned)
    scopes: dict[str, _Scope] = {}
    for i, step in enumerate(steps):
        for key in sorted(step.reads & owned_set):
            if key in scopes:
                scopes[key].last = i
            else:
                scopes[key] = _Scope(key, i, i)
    filled = {k: _filled_at(steps, s, cb_of[k]) for k, s in scopes.items()}
    while True:
        ordered = sorted(scopes.values(), key=lambda s: (s.first, -s.last, s.key))
        crossing = _crossing(ordered)
        if crossing is None:
            return ordered
        outer, inner = crossing
        start = filled[inner.key]
        same_cb = [
            s
            for s in ordered
            if s is not inner and cb_of[s.key] == cb_of[inner.key] and s.first <= inner.first
        ]
        if start is not None and start <= outer.first and all(s.last < start for s in same_cb):
            inner.first = outer.first
        else:
            outer.last = inner.last


def _crossing(ordered: list[_Scope]) -> tuple[_Scope, _Scope] | None:
    """The first open scope that a later-opened scope outlives, with that scope."""
    open_: list[_Scope] = []
    for scope in ordered:
        open_ = [s for s in open_ if s.last >= scope.first]
        for outer in open_:
            if outer.last < scope.last:
                return outer, scope
        open_.append(scope)
    return None


def wrap(steps: list[Step], owned: Iterable[str], cb_of: Mapping[str, str]) -> list[Step]:
    """Enclose `steps` in the waits of the keys this level owns.

    Returns the level's top-level statements as steps whose reads are the keys left
    for an enclosing level to wait for.
    """
    owned_set = set(owned)
    scopes = _scopes(steps, owned_set, cb_of)
    return _nest(steps, 0, len(steps) - 1, scopes, owned_set, cb_of)


def _nest(
    steps: list[Step],
    lo: int,
    hi: int,
    scopes: list[_Scope],
    owned: set[str],
    cb_of: Mapping[str, str],
) -> list[Step]:
    out: list[Step] = []
    i = lo
    while i <= hi:
        starting = [s for s in scopes if s.first == i]
        if not starting:
            out.append(Step(steps[i].stmt, steps[i].reads - owned))
            i += 1
            continue
        end = max(s.last for s in starting)
        outer = [s for s in starting if s.last == end]
        inner = [s for s in scopes if i <= s.first <= end and s not in outer]
        body = _nest(steps, i, end, inner, owned, cb_of)
        buffers = tuple(cb_of[s.key] for s in outer)
        reads = frozenset().union(*(b.reads for b in body))
        out.append(Step(Wait(buffers, tuple(b.stmt for b in body)), reads))
        i = end + 1
    return out
