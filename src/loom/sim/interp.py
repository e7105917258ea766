"""Execute a Program's streams: one generator per (core, engine), one handler per statement.

Handlers are looked up in :data:`HANDLERS` by statement class (STYLE.md §15). A handler
returns the request its statement makes of the scheduler (buffer operation, transfer,
delay) and/or pushes the statement's body on the stream's block stack; :func:`run_stream`
walks that stack. Addresses, trip counts and branch conditions are evaluated per core from
`core_y`, `core_x` and the enclosing loop variables.

Statements of a Parallel group: its DRAM copies are issued together and waited for
together; Send/Receive inside a Parallel run one after the other (an approximation).
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Generator, Iterator
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
    ReceiveEach,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)
from loom.sim.buffers import CircularBuffer, ReserveBlock, TakeBlocks
from loom.sim.compute_cost import CostModel
from loom.sim.engine import Delay, Process, Request
from loom.sim.machine import Machine, Transfer
from loom.sim.pipes import PipeHub, ReceiveReq, SendReq
from loom.sim.topology import Core
from loom.sim.transfers import Leg, window_bank_counts
from loom.symbolic import CeilDiv, Const, Expr, FloorDiv, Max, Min, Mod, Poly, Sym
from loom.symbolic.pyexpr import compile_expr

Gen = Generator[Request, Any, None]

STREAM_NOC = {"reader": 0, "compute": 0, "writer": 1}
"""Reader statements use NoC0, writer statements NoC1."""

CORE_VARS = frozenset(("core_y", "core_x"))
"""The variables every stream binds once, to its core's coordinates."""


Evaluator = Callable[[dict[str, int]], int]
"""An expression's value in a stream's variable bindings."""


def evaluator(e: Expr) -> Evaluator:
    """`e.eval`, as Python source compiled once when every division in `e` is by a
    positive constant: Python's integer arithmetic then gives exactly what `eval` gives
    (and raises nothing it would not). A variable without a value falls back to `eval`,
    which reports it."""
    names = sorted(e.free_names())
    if not _plain(e) or not all(n.isidentifier() and n not in _RESERVED for n in names):
        return e.eval
    body = compile_expr(e, names)
    args = ", ".join(f"_e[{n!r}]" for n in names)
    source = "\n".join(
        (
            "def value(_e):",
            "    try:",
            f"        return _body({args})",
            "    except KeyError:",
            "        return _eval(_e)",
        )
    )
    scope: dict[str, Any] = {"_body": body, "_eval": e.eval}
    exec(compile(source, "<loom-sim-expr>", "exec"), scope)
    fn: Evaluator = scope["value"]
    return fn


_RESERVED = frozenset((*keyword.kwlist, "min", "max", "_e", "_body", "_eval"))
"""Names a variable cannot have in the compiled source."""


def _plain(e: Expr) -> bool:
    """Whether `e` is integer arithmetic whose divisions are by positive constants."""
    if isinstance(e, Const | Sym):
        return True
    if isinstance(e, Poly):
        return all(_plain(a) for mono, _ in e.terms for a in mono)
    if isinstance(e, FloorDiv | Mod | CeilDiv):
        return isinstance(e.rhs, Const) and e.rhs.value > 0 and _plain(e.lhs)
    if isinstance(e, Min | Max):
        return all(_plain(a) for a in e.args)
    return False


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
    delays: dict[int, tuple[Delay, int]] = field(default_factory=dict)
    """Each Compute statement's request and tile-matmuls (by id; the Program outlives
    the run)."""
    decoded: dict[int, Ops] = field(default_factory=dict)
    """Each statement list's (handler, statement) pairs, by id of the list (every list
    is the Program's or kept in `rests`, so ids stay unique while the run lasts)."""
    rests: dict[int, tuple[Stmt, ...]] = field(default_factory=dict)
    """Each Parallel statement's pipe copies (run after its DRAM copies), by id."""
    evaluators: dict[int, Evaluator] = field(default_factory=dict)
    """Each address expression's evaluator (see :func:`evaluator`), by id."""

    def evaluator(self, e: Expr) -> Evaluator:
        """`e`'s evaluator, made once per expression of the Program."""
        fn = self.evaluators.get(id(e))
        if fn is None:
            fn = self.evaluators[id(e)] = evaluator(e)
        return fn


@dataclass
class Frame:
    """One running stream: its core, engine, NoC, buffers and variable bindings."""

    shared: Shared
    core: Core
    engine: str
    noc: int
    cbs: dict[str, CircularBuffer]
    env: dict[str, int] = field(default_factory=dict)
    stack: list[Block] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)
    """Variables of the loops being run, outermost first (traces name the scope)."""
    memo: dict[int, tuple[Block, Request]] = field(default_factory=dict)
    """Per statement (by id; the Program outlives the run): the body block (with its exit
    action) and request of a Reserve or Wait, built once instead of at every iteration;
    one block per statement is enough, a statement's body being entered again only
    after it was left."""
    branches: dict[int, tuple[Block, Block] | Block] = field(default_factory=dict)
    """Per IfCore statement (by id): its two branches' blocks, built once (as `memo`);
    only the branch taken when the condition reads no variable but the core's."""
    copies: dict[int, tuple[Evaluator, Evaluator, dict[tuple[int, int], Transfer]]] = field(
        default_factory=dict
    )
    """Per ReadDram or WriteDram statement (by id): its row's and column's evaluators and
    its request per window (row, col)."""
    requests: dict[int, Request] = field(default_factory=dict)
    """Per Send or Receive statement (by id): its request, built once (as `memo`)."""
    proc: Process | None = None
    """The engine running the stream (set when it is spawned)."""

    def cb(self, name: str) -> CircularBuffer:
        try:
            return self.cbs[name]
        except KeyError:
            raise SimulationError(
                f"{self.engine} stream uses buffer '{name}', which the program does not "
                "declare; add it to Program.buffers"
            ) from None


Step = Request | Iterator[Request] | None
"""What a handler returns: a request to yield, a short generator of requests, or nothing
(it pushed a block to execute)."""

Handler = Callable[["Frame", Any], Step]
Ops = tuple[tuple[Handler, Stmt], ...]


class Block:
    """A statement list being executed: a stack entry, with what to do when it ends."""

    __slots__ = ("end", "on_exit", "ops", "pos", "stmts")

    def __init__(
        self, stmts: tuple[Stmt, ...], ops: Ops, on_exit: Callable[[], bool] | None = None
    ) -> None:
        self.stmts = stmts
        self.ops = ops
        """`stmts` with each statement's handler, looked up once per program."""
        self.end = len(ops)
        """Where the block ends (`pos` reaching it)."""
        self.pos = 0
        self.on_exit = on_exit
        """Called when the block ends; returns True to run the block again (loops)."""


def block(f: Frame, stmts: tuple[Stmt, ...], on_exit: Callable[[], bool] | None = None) -> Block:
    """A block of `stmts`, its handlers looked up once per statement list."""
    decoded = f.shared.decoded
    ops = decoded.get(id(stmts))
    if ops is None:
        ops = decoded[id(stmts)] = tuple((HANDLERS.get(type(s), unknown), s) for s in stmts)
    return Block(stmts, ops, on_exit)


def unknown(f: Frame, s: Stmt) -> Step:
    """The handler of a statement the simulator does not know: it reports it."""
    raise SimulationError(
        f"the simulator cannot execute statement {type(s).__name__}; it knows "
        f"{', '.join(sorted(c.__name__ for c in HANDLERS))}"
    )


def run_stream(frame: Frame, stmts: tuple[Stmt, ...]) -> Gen:
    """The process body of one engine of one core.

    An explicit stack of blocks rather than nested generators, so that a request deep in
    loops and scopes reaches the scheduler through one generator, not one per level."""
    stack = frame.stack
    stack.append(block(frame, stmts))
    while stack:
        top = stack[-1]
        pos = top.pos
        if pos == top.end:
            if top.on_exit is not None and top.on_exit():
                top.pos = 0
            else:
                stack.pop()
            continue
        top.pos = pos + 1
        handler, s = top.ops[pos]
        step = handler(frame, s)
        if step is None:
            continue
        if isinstance(step, Request):
            yield step
        else:
            yield from step


def _loop(f: Frame, s: Loop) -> Step:
    n = s.count.eval(f.env)
    if n <= 0:
        return None
    env, name, loops = f.env, s.var.name, f.loops
    outer = env.get(name)
    env[name] = 0
    loops.append(name)

    def next_iteration() -> bool:
        i = env[name] + 1
        if i < n:
            env[name] = i
            return True
        if outer is None:
            del env[name]
        else:
            env[name] = outer
        loops.pop()
        return False

    f.stack.append(block(f, s.body, next_iteration))
    return None


def _if_core(f: Frame, s: IfCore) -> Step:
    hit = f.branches.get(id(s))
    if hit is None:
        hit = (block(f, s.then), block(f, s.orelse))
        taken = core_branch(f, s)
        if taken is not None:
            hit = hit[0] if taken else hit[1]
        f.branches[id(s)] = hit
    if not isinstance(hit, Block):
        hit = hit[0] if s.cond.eval(f.env) else hit[1]
    hit.pos = 0
    f.stack.append(hit)
    return None


def _reserve(f: Frame, s: Reserve) -> Step:
    hit = f.memo.get(id(s))
    if hit is None:  # a statement's buffer, request and exit action never change
        cb = f.cb(s.buffer)
        sched = f.shared.machine.sched

        def push() -> bool:
            cb.push(sched)
            return False

        hit = f.memo[id(s)] = (block(f, s.body, push), ReserveBlock(cb))
    body, request = hit
    body.pos = 0
    f.stack.append(body)
    return request


def _wait(f: Frame, s: Wait) -> Step:
    hit = f.memo.get(id(s))
    if hit is None:
        cbs = tuple(f.cb(b) for b in s.buffers)
        sched = f.shared.machine.sched

        def pop() -> bool:
            for cb in cbs:
                cb.pop(sched)
            return False

        hit = f.memo[id(s)] = (block(f, s.body, pop), TakeBlocks(cbs))
    body, request = hit
    body.pos = 0
    f.stack.append(body)
    return request


def _dram_leg(f: Frame, s: ReadDram | WriteDram, write: bool) -> Leg:
    tensor = _tensor(f, s)
    return _window_leg(f, s, tensor, s.row.eval(f.env), s.col.eval(f.env), write)


def _tensor(f: Frame, s: ReadDram | WriteDram) -> DramTensor:
    tensor = f.shared.tensors.get(s.tensor)
    if tensor is None:
        raise SimulationError(
            f"core ({f.core[0]},{f.core[1]}) copies tensor '{s.tensor}', which the program "
            "does not declare; add it to Program.tensors"
        )
    return tensor


def _window_leg(
    f: Frame, s: ReadDram | WriteDram, tensor: DramTensor, row: int, col: int, write: bool
) -> Leg:
    """The leg of the copy of `s`'s window at tile (`row`, `col`) of `tensor`."""
    if row < 0 or col < 0 or row + s.rows > tensor.rows or col + s.cols > tensor.cols:
        raise SimulationError(
            f"core ({f.core[0]},{f.core[1]}) copies tiles [{row}, {row + s.rows}) x "
            f"[{col}, {col + s.cols}) of tensor '{s.tensor}', outside its "
            f"{tensor.rows}x{tensor.cols} tile grid"
        )
    sh = f.shared
    banks = sh.machine.topo.n_banks
    counts = window_bank_counts(banks, tensor.cols, row, col, s.rows, s.cols)
    return sh.machine.legs.dram(f.noc, f.core, counts, sh.tile_bytes[s.tensor], write)


def _copy(f: Frame, s: ReadDram | WriteDram, write: bool) -> Transfer:
    """The request of a DRAM copy statement, built once per window it copies (a core
    copies the same windows again and again: a request is immutable)."""
    hit = f.copies.get(id(s))
    if hit is None:
        _tensor(f, s)
        sh = f.shared
        hit = f.copies[id(s)] = (sh.evaluator(s.row), sh.evaluator(s.col), {})
    row_of, col_of, windows = hit
    env = f.env
    row, col = row_of(env), col_of(env)
    req = windows.get((row, col))
    if req is None:
        leg = _window_leg(f, s, _tensor(f, s), row, col, write)
        what = f"write {s.tensor}" if write else f"read {s.tensor}"
        req = windows[(row, col)] = Transfer(f.shared.machine, (leg,), what)
    return req


def _read_dram(f: Frame, s: ReadDram) -> Step:
    return _copy(f, s, write=False)


def _write_dram(f: Frame, s: WriteDram) -> Step:
    return _copy(f, s, write=True)


def _send(f: Frame, s: Send) -> Step:
    req = f.requests.get(id(s))
    if req is None:  # a statement's request never changes (the pipe is chosen in it)
        f.cb(s.buffer)
        hub = f.shared.hub
        cursor = hub.cursor(s.net, f.core, "send")
        req = f.requests[id(s)] = SendReq(hub, cursor, f.noc, f.shared.block_bytes[s.buffer])
    return req


def _receive(f: Frame, s: Receive) -> Step:
    req = f.requests.get(id(s))
    if req is None:
        f.cb(s.buffer)
        hub = f.shared.hub
        req = f.requests[id(s)] = ReceiveReq(hub, hub.cursor(s.net, f.core, "receive"))
    return req


def _receive_all(f: Frame, s: ReceiveAll) -> Step:
    return _receive_each(f, ReceiveEach((s.buffer,), s.net))


def _receive_each(f: Frame, s: ReceiveEach) -> Step:
    """The owner of a gather: per pipe reaching it, in net order, receive each buffer."""
    cbs = tuple(f.cb(b) for b in s.buffers)
    hub = f.shared.hub
    sched = f.shared.machine.sched

    def steps() -> Gen:
        for pipe in hub.pipes_to(s.net, f.core):
            req = ReceiveReq(hub, None, hub.pipe(s.net, pipe))
            for cb in cbs:
                yield ReserveBlock(cb)
                yield req
                cb.push(sched)

    return steps()


def _parallel(f: Frame, s: Parallel) -> Step:
    """DRAM copies are issued together; pipe copies run in order after them."""
    rest = f.shared.rests.get(id(s))
    if rest is None:  # kept, so that its block is decoded once (blocks go by id)
        rest = f.shared.rests[id(s)] = parallel_rest(s)
    if rest:
        f.stack.append(block(f, rest))
    return parallel_transfer(f, s)


def parallel_rest(s: Parallel) -> tuple[Stmt, ...]:
    """The pipe copies of a Parallel statement (run in order after its DRAM copies)."""
    return tuple(c for c in s.copies if not isinstance(c, ReadDram | WriteDram))


def parallel_transfer(f: Frame, s: Parallel) -> Transfer | None:
    """The request of a Parallel statement's DRAM copies, all issued together."""
    legs = [
        _dram_leg(f, c, isinstance(c, WriteDram))
        for c in s.copies
        if isinstance(c, ReadDram | WriteDram)
    ]
    return Transfer(f.shared.machine, tuple(legs), "parallel copies") if legs else None


def _compute(f: Frame, s: Compute) -> Step:
    delay, tiles = compute_delay(f, s)
    f.shared.matmul_tiles += tiles
    return delay


def compute_delay(f: Frame, s: Compute) -> tuple[Delay, int]:
    """A Compute statement's request and tile-matmuls, the same at every core and
    iteration (made once per statement)."""
    sh = f.shared
    hit = sh.delays.get(id(s))
    if hit is None:
        cost = sh.costs.cost(s)
        hit = sh.delays[id(s)] = (Delay(cost.cycles, f"compute {s.dst}"), cost.matmul_tiles)
    return hit


def core_branch(f: Frame, s: IfCore) -> bool | None:
    """Which branch of `s` this core takes at every execution, when its condition reads
    only the core's coordinates (None: evaluate it each time)."""
    if s.cond.free_names() <= CORE_VARS and not CORE_VARS & set(f.loops):
        return bool(s.cond.eval(f.env))
    return None


HANDLERS: dict[type[Stmt], Callable[[Frame, Any], Step]] = {
    Loop: _loop,
    IfCore: _if_core,
    Reserve: _reserve,
    Wait: _wait,
    ReadDram: _read_dram,
    WriteDram: _write_dram,
    Send: _send,
    Receive: _receive,
    ReceiveAll: _receive_all,
    ReceiveEach: _receive_each,
    Parallel: _parallel,
    Compute: _compute,
}
