"""Consumer scopes of the compute stream: which `Wait` encloses which statements.

The compute stream is first built as a list of *steps* per nesting level, each step a
statement plus the keys (buffered value instances) it reads. A key owned by the level
(its block is produced once per pass through this level) gets one `Wait` spanning its
first to its last reader, because a waited block is popped exactly once when its scope
ends. Scopes must nest like Python `with` blocks: when a scope opened inside another
outlives it, the outer one is extended (its block is held a little longer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from loom.ir.program import Compute, Reserve, Stmt, Wait
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


def _scopes(steps: list[Step], owned: Iterable[str]) -> list[_Scope]:
    owned_set = set(owned)
    scopes: dict[str, _Scope] = {}
    for i, step in enumerate(steps):
        for key in sorted(step.reads & owned_set):
            if key in scopes:
                scopes[key].last = i
            else:
                scopes[key] = _Scope(key, i, i)
    ordered = sorted(scopes.values(), key=lambda s: (s.first, -s.last, s.key))
    open_: list[_Scope] = []
    for scope in ordered:
        open_ = [s for s in open_ if s.last >= scope.first]
        for outer in open_:  # every open scope encloses the new one
            outer.last = max(outer.last, scope.last)
        open_.append(scope)
    return ordered


def wrap(steps: list[Step], owned: Iterable[str], cb_of: Mapping[str, str]) -> list[Step]:
    """Enclose `steps` in the waits of the keys this level owns.

    Returns the level's top-level statements as steps whose reads are the keys left
    for an enclosing level to wait for.
    """
    owned_set = set(owned)
    scopes = _scopes(steps, owned_set)
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
