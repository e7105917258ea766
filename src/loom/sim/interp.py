"""Execute a Program's streams: one generator per (core, engine), one handler per statement.

Handlers are looked up in :data:`HANDLERS` by statement class (STYLE.md §15). Each is a
generator that yields requests (buffer operations, transfers, delays) to the scheduler.
Addresses, trip counts and branch conditions are evaluated per core from `core_y`,
`core_x` and the enclosing loop variables.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from loom.errors import SimulationError
from loom.ir.program import (
    Compute,
    DramTensor,
    IfCore,
    Loop,
    Parallel,
    Program,
    ReadDram,
    Receive,
    ReceiveAll,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)
from loom.sim.buffers import CircularBuffer, ReserveBlock, TakeBlocks
from loom.sim.compute_cost import CostModel
from loom.sim.engine import Delay, Request
from loom.sim.machine import Machine, Transfer
from loom.sim.pipes import PipeHub, ReceiveReq, SendReq
from loom.sim.topology import Core
from loom.sim.transfers import Leg, window_bank_counts

Gen = Generator[Request, Any, None]

STREAM_NOC = {"reader": 0, "compute": 0, "writer": 1}
"""Reader statements use NoC0, writer statements NoC1."""


@dataclass
class Shared:
    """What every stream of one simulation shares."""

    program: Program
    machine: Machine
    hub: PipeHub
    costs: CostModel
    tile_bytes: dict[str, int]
    """Bytes of one tile (one DRAM page) of each tensor, by name."""
    block_bytes: dict[str, int]
    """Bytes of one block of each buffer, by name."""
    tensors: dict[str, DramTensor]
    matmul_tiles: int = 0


@dataclass
class Frame:
    """One running stream: its core, engine, NoC, buffers and variable bindings."""

    shared: Shared
    core: Core
    engine: str
    noc: int
    cbs: dict[str, CircularBuffer]
    env: dict[str, int] = field(default_factory=dict)

    def cb(self, name: str) -> CircularBuffer:
        try:
            return self.cbs[name]
        except KeyError:
            raise SimulationError(
                f"{self.engine} stream uses buffer '{name}', which the program does not "
                "declare; add it to Program.buffers"
            ) from None


def run_stream(frame: Frame, stmts: tuple[Stmt, ...]) -> Gen:
    """The process body of one engine of one core."""
    yield from run_block(frame, stmts)


def run_block(frame: Frame, stmts: tuple[Stmt, ...]) -> Gen:
    for s in stmts:
        handler = HANDLERS.get(type(s))
        if handler is None:
            raise SimulationError(
                f"the simulator cannot execute statement {type(s).__name__}; it knows "
                f"{', '.join(sorted(c.__name__ for c in HANDLERS))}"
            )
        yield from handler(frame, s)


def _loop(f: Frame, s: Loop) -> Gen:
    n = s.count.eval(f.env)
    name = s.var.name
    outer = f.env.get(name)
    for i in range(n):
        f.env[name] = i
        yield from run_block(f, s.body)
    if outer is None:
        f.env.pop(name, None)
    else:
        f.env[name] = outer


def _if_core(f: Frame, s: IfCore) -> Gen:
    yield from run_block(f, s.then if s.cond.eval(f.env) else s.orelse)


def _reserve(f: Frame, s: Reserve) -> Gen:
    cb = f.cb(s.buffer)
    yield ReserveBlock(cb)
    yield from run_block(f, s.body)
    cb.push(f.shared.machine.sched)


def _wait(f: Frame, s: Wait) -> Gen:
    cbs = tuple(f.cb(b) for b in s.buffers)
    yield TakeBlocks(cbs)
    yield from run_block(f, s.body)
    sched = f.shared.machine.sched
    for cb in cbs:
        cb.pop(sched)


def _dram_leg(f: Frame, s: ReadDram | WriteDram, write: bool) -> Leg:
    sh = f.shared
    tensor = sh.tensors.get(s.tensor)
    if tensor is None:
        raise SimulationError(
            f"core ({f.core[0]},{f.core[1]}) copies tensor '{s.tensor}', which the program "
            "does not declare; add it to Program.tensors"
        )
    row, col = s.row.eval(f.env), s.col.eval(f.env)
    if row < 0 or col < 0 or row + s.rows > tensor.rows or col + s.cols > tensor.cols:
        raise SimulationError(
            f"core ({f.core[0]},{f.core[1]}) copies tiles [{row}, {row + s.rows}) x "
            f"[{col}, {col + s.cols}) of tensor '{s.tensor}', outside its "
            f"{tensor.rows}x{tensor.cols} tile grid"
        )
    banks = sh.machine.topo.n_banks
    counts = window_bank_counts(banks, tensor.cols, row, col, s.rows, s.cols)
    return sh.machine.legs.dram(f.noc, f.core, counts, sh.tile_bytes[s.tensor], write)


def _read_dram(f: Frame, s: ReadDram) -> Gen:
    yield Transfer(f.shared.machine, (_dram_leg(f, s, write=False),), f"read {s.tensor}")


def _write_dram(f: Frame, s: WriteDram) -> Gen:
    yield Transfer(f.shared.machine, (_dram_leg(f, s, write=True),), f"write {s.tensor}")


def _send(f: Frame, s: Send) -> Gen:
    f.cb(s.buffer)
    yield SendReq(f.shared.hub, s.net, f.noc, f.shared.block_bytes[s.buffer])


def _receive(f: Frame, s: Receive) -> Gen:
    f.cb(s.buffer)
    yield ReceiveReq(f.shared.hub, s.net)


def _receive_all(f: Frame, s: ReceiveAll) -> Gen:
    cb = f.cb(s.buffer)
    hub = f.shared.hub
    for pipe in hub.pipes_to(s.net, f.core):
        yield ReserveBlock(cb)
        yield ReceiveReq(hub, s.net, pipe)
        cb.push(f.shared.machine.sched)


def _parallel(f: Frame, s: Parallel) -> Gen:
    """DRAM copies are issued together; pipe copies run in order after them."""
    legs = [_dram_leg(f, c, isinstance(c, WriteDram)) for c in s.copies
            if isinstance(c, ReadDram | WriteDram)]
    if legs:
        yield Transfer(f.shared.machine, tuple(legs), "parallel copies")
    rest = tuple(c for c in s.copies if not isinstance(c, ReadDram | WriteDram))
    yield from run_block(f, rest)


def _compute(f: Frame, s: Compute) -> Gen:
    cost = f.shared.costs.cost(s)
    f.shared.matmul_tiles += cost.matmul_tiles
    yield Delay(cost.cycles, f"compute {s.dst}")


HANDLERS: dict[type[Stmt], Callable[[Frame, Any], Gen]] = {
    Loop: _loop,
    IfCore: _if_core,
    Reserve: _reserve,
    Wait: _wait,
    ReadDram: _read_dram,
    WriteDram: _write_dram,
    Send: _send,
    Receive: _receive,
    ReceiveAll: _receive_all,
    Parallel: _parallel,
    Compute: _compute,
}
