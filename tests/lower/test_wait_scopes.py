"""Crossing consumer scopes: the later-opened wait opens with the earlier one when its
block is already filled, instead of holding the earlier one's block longer (which
deadlocked a value sharing that block's buffer: Helion's jsd_kernel)."""

from __future__ import annotations

from loom.ir.program import BlockRef, Compute, Reserve, Stmt, Wait, walk_stmts
from loom.lower.waits import Step, wrap


def _produce(cb: str, *reads: str) -> Step:
    expr = BlockRef(reads[0]) if reads else BlockRef(cb)
    return Step(Reserve(cb, (Compute(cb, expr),)), frozenset(reads))


def _reserved_while_held(stmts: tuple[Stmt, ...], held: frozenset[str]) -> list[str]:
    bad: list[str] = []
    for s in stmts:
        if isinstance(s, Wait):
            bad += _reserved_while_held(s.body, held | set(s.buffers))
        elif isinstance(s, Reserve):
            bad += [s.buffer] if s.buffer in held else []
    return bad


def _wait_order(stmts: tuple[Stmt, ...]) -> list[tuple[str, ...]]:
    return [s.buffers for s in walk_stmts(stmts) if isinstance(s, Wait)]


def test_crossing_wait_opens_with_the_outer_one() -> None:
    cb_of = {"a": "cb_ac", "b": "cb_b", "c": "cb_ac"}  # c shares a's buffer
    steps = [
        _produce("cb_ac"),  # a
        _produce("cb_b"),  # b
        Step(Reserve("out1", ()), frozenset({"a"})),
        Step(Reserve("out2", ()), frozenset({"b"})),
        Step(Reserve("out3", ()), frozenset({"a"})),  # a's last read
        _produce("cb_ac", "b"),  # c, after a's last read, while b is still read
        Step(Reserve("out4", ()), frozenset({"b", "c"})),
    ]
    top = tuple(s.stmt for s in wrap(steps, ("a", "b", "c"), cb_of))
    assert _reserved_while_held(top, frozenset()) == []
    assert _wait_order(top) == [("cb_b",), ("cb_ac",), ("cb_ac",)]


def test_a_wait_on_a_block_another_engine_fills_extends_the_outer_one() -> None:
    """A load's block is filled by a data-movement engine: waiting for it earlier could
    block compute, so the outer scope is held longer instead."""
    cb_of = {"a": "cb_a", "x": "load_x"}
    steps = [
        _produce("cb_a"),
        Step(Reserve("out1", ()), frozenset({"a"})),
        Step(Reserve("out2", ()), frozenset({"x"})),
        Step(Reserve("out3", ()), frozenset({"a"})),
        Step(Reserve("out4", ()), frozenset({"x"})),
    ]
    top = tuple(s.stmt for s in wrap(steps, ("a", "x"), cb_of))
    assert _wait_order(top) == [("cb_a",), ("load_x",)]
    outer = next(s for s in top if isinstance(s, Wait))
    held_to = [s.buffer for s in walk_stmts(outer.body) if isinstance(s, Reserve)]
    assert held_to[-1] == "out4"  # a's block is held until x's last read
