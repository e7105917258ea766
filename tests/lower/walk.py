"""A test-only walker: runs a Program's stream on one core symbolically and lists its
copies, so tests can check what every core reads, writes, sends and receives."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from loom.ir.program import (
    IfCore,
    Loop,
    Parallel,
    Program,
    ReadDram,
    Receive,
    ReceiveAll,
    ReceiveEach,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)


@dataclass(frozen=True)
class Event:
    kind: str  # read | write | send | recv
    name: str  # tensor or net
    where: tuple  # (row, col, rows, cols) or (pipe index,)


def _pipes(program: Program, net: str, core: tuple[int, int], role: str) -> list[int]:
    pipes = program.net(net).pipes
    if role == "send":
        return [i for i, p in enumerate(pipes) if p.src == core]
    return [i for i, p in enumerate(pipes) if core in p.receivers and p.src != core]


def walk(program: Program, stmts: tuple[Stmt, ...], core: tuple[int, int]) -> list[Event]:
    out: list[Event] = []
    _walk(program, stmts, core, {"core_y": core[0], "core_x": core[1]}, out)
    return out


def _walk(p: Program, stmts: tuple[Stmt, ...], core: tuple, env: dict, out: list) -> None:
    for s in stmts:
        match s:
            case Loop(var=v, count=n, body=body):
                for i in range(n.eval(env)):
                    _walk(p, body, core, {**env, v.name: i}, out)
            case IfCore(cond=c, then=then, orelse=orelse):
                _walk(p, then if c.eval(env) else orelse, core, env, out)
            case Reserve(body=body) | Wait(body=body):
                _walk(p, body, core, env, out)
            case Parallel(copies=copies):
                _walk(p, copies, core, env, out)
            case ReadDram() | WriteDram():
                kind = "read" if isinstance(s, ReadDram) else "write"
                where = (s.row.eval(env), s.col.eval(env), s.rows, s.cols)
                out.append(Event(kind, s.tensor, where))
            case Send(net=net):
                pipes = _pipes(p, net, core, "send")
                assert len(pipes) == 1, f"core {core} is the source of {len(pipes)} pipes of {net}"
                out.append(Event("send", net, (pipes[0],)))
            case Receive(net=net):
                pipes = _pipes(p, net, core, "recv")
                assert len(pipes) == 1, f"core {core} is reached by {len(pipes)} pipes of {net}"
                out.append(Event("recv", net, (pipes[0],)))
            case ReceiveAll(net=net) | ReceiveEach(net=net):
                count = len(s.buffers) if isinstance(s, ReceiveEach) else 1
                for i in _pipes(p, net, core, "recv"):
                    out.extend([Event("recv", net, (i,))] * count)


def tiles_of(events: list[Event], kind: str, tensor: str) -> Counter:
    """How many times each (row, col) tile of `tensor` is read or written."""
    hits: Counter = Counter()
    for e in events:
        if e.kind == kind and e.name == tensor:
            r, c, nr, nc = e.where
            hits.update((r + i, c + j) for i in range(nr) for j in range(nc))
    return hits


def all_events(program: Program, stream: str) -> dict[tuple[int, int], list[Event]]:
    body = dict(program.streams)[stream]
    cores = [(y, x) for y in range(program.grid[0]) for x in range(program.grid[1])]
    return {core: walk(program, body, core) for core in cores}
