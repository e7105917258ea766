"""A stream's statements as one generated Python generator: the interpreter's work, unrolled.

:func:`loom.sim.interp.run_stream` walks a stack of statement blocks and asks a handler
per statement; a flash attention simulation runs ~1.5 million statements that way, and
the walk, the per-statement memo lookups and the trip through the scheduler of every
buffer operation (even one that can go at once) were most of its time. Here each
stream is written once as Python source (loops as `for`, branches as `if`, a Reserve
or Wait as its test inline, its body after it, its push or pop after that) and
compiled; each core's engine runs it with its own buffers and variables.

It does exactly what the interpreter does, in the same order between the same requests:
a buffer operation that can go at once is done where the interpreter's request would
have been started and returned at once; one that cannot is yielded as the same request
(which registers the waiter, and is retried as before). Leaf statements (copies, pipe
transfers) call the interpreter's own handlers, so their requests, and the errors of a
statement that cannot run, come at the same moment. A Loop sets and restores its
variable and the trace's loop names as the interpreter does. Every result bit is the
interpreter's (tests/sim/test_sim_periodicity.py runs both: a probed run interprets).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from loom.ir.program import Compute, IfCore, Loop, Parallel, Reserve, Stmt, Wait
from loom.sim.buffers import ReserveBlock, TakeBlocks
from loom.sim.engine import SUSPENDED, Request
from loom.sim.interp import (
    HANDLERS,
    Frame,
    Gen,
    compute_delay,
    core_branch,
    parallel_rest,
    parallel_transfer,
    unknown,
)

StreamFn = Callable[[Frame, tuple[Any, ...]], Gen]

_REQUESTS = frozenset(("ReadDram", "WriteDram", "Send", "Receive"))
"""Leaf statements whose handler always returns one request."""


class _Writer:
    """Source lines, the constants they refer to (`_c[i]`) and per-stream locals."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: list[Any] = []
        self.locals: list[str] = []
        self.n = 0

    def const(self, obj: Any) -> str:
        self.consts.append(obj)
        return f"_c[{len(self.consts) - 1}]"

    def local(self, prefix: str) -> str:
        """A fresh local of the generator, None until its statement first runs."""
        self.n += 1
        name = f"{prefix}{self.n}"
        self.locals.append(name)
        return name

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)


def _block(w: _Writer, ind: int, stmts: tuple[Stmt, ...]) -> None:
    for s in stmts:
        emit = _EMIT.get(type(s), _leaf)
        emit(w, ind, s)


def _loop(w: _Writer, ind: int, s: Loop) -> None:
    st, n, outer, i = w.const(s), w.fresh("n"), w.fresh("outer"), w.fresh("i")
    name = repr(s.var.name)
    w.emit(ind, f"{n} = {st}.count.eval(env)")
    w.emit(ind, f"if {n} > 0:")
    w.emit(ind + 1, f"{outer} = env.get({name})")
    w.emit(ind + 1, f"loops.append({name})")
    w.emit(ind + 1, f"for {i} in range({n}):")
    w.emit(ind + 2, f"env[{name}] = {i}")
    _block(w, ind + 2, s.body)
    w.emit(ind + 1, f"if {outer} is None:")
    w.emit(ind + 2, f"del env[{name}]")
    w.emit(ind + 1, "else:")
    w.emit(ind + 2, f"env[{name}] = {outer}")
    w.emit(ind + 1, "loops.pop()")


def _if_core(w: _Writer, ind: int, s: IfCore) -> None:
    """The branch is decided once per core when the condition reads only the core's
    coordinates (as the interpreter does), else evaluated at each execution."""
    st, taken = w.const(s), w.local("taken")
    w.emit(ind, f"if {taken} is None:")
    w.emit(ind + 1, f"{taken} = _core_branch(f, {st})")
    w.emit(ind + 1, f"if {taken} is None:")
    w.emit(ind + 2, f"{taken} = _EVAL")
    w.emit(ind, f"if ({st}.cond.eval(env) if {taken} is _EVAL else {taken}):")
    _block(w, ind + 1, s.then)
    w.emit(ind + 1, "pass")
    if s.orelse:
        w.emit(ind, "else:")
        _block(w, ind + 1, s.orelse)


def _reserve(w: _Writer, ind: int, s: Reserve) -> None:
    st, req, cb = w.const(s), w.local("reserve"), w.fresh("cb")
    w.emit(ind, f"if {req} is None:")
    w.emit(ind + 1, f"{req} = _ReserveBlock(f.cb({st}.buffer))")
    w.emit(ind, f"{cb} = {req}.cb")
    w.emit(ind, f"if {cb}.reserved - {cb}.popped < {cb}.depth:")
    w.emit(ind + 1, f"{cb}.reserved += 1")
    w.emit(ind, "else:")
    w.emit(ind + 1, f"yield {req}")
    _block(w, ind, s.body)
    _count(w, ind, cb, "pushed")


def _wait(w: _Writer, ind: int, s: Wait) -> None:
    """TakeBlocks.start's test and take inline, unrolled over the buffers."""
    if not s.buffers:  # nothing to take or pop
        _block(w, ind, s.body)
        return
    st, req = w.const(s), w.local("take")
    w.emit(ind, f"if {req} is None:")
    w.emit(ind + 1, f"{req} = _TakeBlocks(tuple(f.cb(b) for b in {st}.buffers))")
    cbs = [w.fresh("cb") for _ in s.buffers]
    w.emit(ind, f"{', '.join(cbs)}, = {req}.cbs")
    w.emit(ind, f"if {' and '.join(f'{cb}.pushed > {cb}.taken' for cb in cbs)}:")
    for cb in cbs:
        w.emit(ind + 1, f"{cb}.taken += 1")
    w.emit(ind, "else:")
    w.emit(ind + 1, f"yield {req}")
    _block(w, ind, s.body)
    for cb in cbs:
        _count(w, ind, cb, "popped")


def _count(w: _Writer, ind: int, cb: str, counter: str) -> None:
    """CircularBuffer.push or .pop, inline: one count and a test for waiters."""
    w.emit(ind, f"{cb}.{counter} += 1")
    w.emit(ind, f"if {cb}.waiters:")
    w.emit(ind + 1, f"{cb}.wake(sched)")


def _compute(w: _Writer, ind: int, s: Compute) -> None:
    """The statement's Delay, started inline (Delay.start's statements): the engine is
    busy until the end, when the scheduler resumes it. Its tile-matmuls are counted in
    the stream's `tiles`, added to the run's when the stream ends (an int sum: no
    order to keep)."""
    st, cycles, end = w.const(s), w.local("cycles"), w.fresh("end")
    what, tiles = w.fresh("what"), w.fresh("tiles")
    w.emit(ind, f"if {cycles} is None:")
    w.emit(ind + 1, f"{cycles}, {what}, {tiles} = _compute_delay(f, {st})")
    w.emit(ind, f"tiles += {tiles}")
    w.emit(ind, f"if {cycles} > 0.0:")
    w.emit(ind + 1, "now = sched.now")
    w.emit(ind + 1, f"{end} = now + {cycles}")
    w.emit(ind + 1, f"proc.busy += {end} - now")
    w.emit(ind + 1, f"if tracing and {end} > now:")
    w.emit(ind + 2, f"proc.record_interval(now, {end}, {what})")
    w.emit(ind + 1, f"at({end}, resume, proc)")
    w.emit(ind + 1, "yield _SUSPENDED")


def _parallel(w: _Writer, ind: int, s: Parallel) -> None:
    st, req = w.const(s), w.fresh("req")
    w.emit(ind, f"{req} = _parallel_transfer(f, {st})")
    w.emit(ind, f"if {req} is not None:")
    w.emit(ind + 1, f"yield {req}")
    _block(w, ind, parallel_rest(s))


def _leaf(w: _Writer, ind: int, s: Stmt) -> None:
    """Any other statement: its interpreter handler, and the request or requests it
    returns (an unknown statement's handler reports it)."""
    st, handler = w.const(s), w.const(HANDLERS.get(type(s), unknown))
    if type(s).__name__ in _REQUESTS:
        w.emit(ind, f"yield {handler}(f, {st})")
        return
    step = w.fresh("step")
    w.emit(ind, f"{step} = {handler}(f, {st})")
    w.emit(ind, f"if {step} is not None:")
    w.emit(ind + 1, f"if isinstance({step}, _Request):")
    w.emit(ind + 2, f"yield {step}")
    w.emit(ind + 1, "else:")
    w.emit(ind + 2, f"yield from {step}")


_EMIT: dict[type, Callable[[_Writer, int, Any], None]] = {
    Loop: _loop,
    IfCore: _if_core,
    Reserve: _reserve,
    Wait: _wait,
    Compute: _compute,
    Parallel: _parallel,
}


def compile_stream(stmts: tuple[Stmt, ...]) -> Callable[[Frame], Gen] | None:
    """The process body of `stmts` for one core's frame, or None when Python cannot
    compile the source (more than 20 nested loops and branches): then the caller
    interprets the stream."""
    w = _Writer()
    _block(w, 1, stmts)
    head = [
        "def stream(f, _c):",
        "    env = f.env",
        "    loops = f.loops",
        "    sh = f.shared",
        "    sched = sh.machine.sched",
        "    at = sched.at",
        "    resume = sched.resume",
        "    proc = f.proc",
        "    tracing = proc.intervals is not None",
        "    tiles = 0",
        *(f"    {name} = None" for name in w.locals),
    ]
    tail = ("    sh.matmul_tiles += tiles", "    return", "    yield")
    fn = _function("\n".join((*head, *w.lines, *tail)))
    if fn is None:
        return None
    consts = tuple(w.consts)
    return lambda frame: fn(frame, consts)


@lru_cache(maxsize=256)
def _function(source: str) -> StreamFn | None:
    """The compiled function of `source`, kept: the source holds only the streams'
    shape (their statements are its constants), so the programs of one kernel at other
    sizes, and the same program simulated again, reuse it (compiling a long stream
    costs milliseconds, as much as simulating a small program)."""
    scope: dict[str, Any] = {
        "_ReserveBlock": ReserveBlock,
        "_TakeBlocks": TakeBlocks,
        "_Request": Request,
        "_SUSPENDED": SUSPENDED,
        "_EVAL": _EVAL,
        "_core_branch": core_branch,
        "_compute_delay": _delay_parts,
        "_parallel_transfer": parallel_transfer,
    }
    try:
        code = compile(source, "<loom-sim-stream>", "exec")
    except (SyntaxError, RecursionError):
        return None
    exec(code, scope)
    fn: StreamFn = scope["stream"]
    return fn


def _delay_parts(f: Frame, s: Compute) -> tuple[float, str, int]:
    """A Compute statement's cycles, trace label and tile-matmuls."""
    delay, tiles = compute_delay(f, s)
    return delay.cycles, delay.what, tiles


_EVAL = object()
"""An IfCore whose condition is evaluated at each execution."""
