"""Send/Receive rendezvous on pipe nets (multicast operands, gathers).

Matching: the j-th Send on a pipe pairs with the j-th Receive from that pipe at each of
its receivers. A Receive at a core reached by several pipes of a net takes them in net
order, round-robin (so rotating senders work when the Receives follow the same order);
`ReceiveAll` names its pipe explicitly.

Protocol (TT-Metal's semaphore handshake): a receiver that has reserved its block signals
the sender (one semaphore write, `semaphore_cycles`); once every receiver's signal has
arrived, the sender writes the block (one unicast write, or one linked multicast followed
by the flag that releases the path, see LegBuilder.multicast_block) and both sides finish
when the data and the flag have landed.
"""

from __future__ import annotations

from typing import Any

from loom.errors import SimulationError
from loom.ir.program import PipeNet
from loom.sim.engine import PENDING, Process, Request, Scheduler
from loom.sim.machine import Machine
from loom.sim.topology import Core
from loom.sim.transfers import Leg


class _Pipe:
    """One pipe's state: its receivers, the Send and Receive counts, the rendezvous not
    yet started, and the legs and trace labels of its transfers (built once each)."""

    __slots__ = (
        "index",
        "legs",
        "moving",
        "net",
        "open",
        "receivers",
        "recv_seq",
        "send_seq",
        "src",
    )

    def __init__(self, net: str, index: int, src: Core, receivers: tuple[Core, ...]) -> None:
        self.net = net
        self.index = index
        self.src = src
        self.receivers = receivers
        self.send_seq = 0
        self.recv_seq: dict[Core, int] = {}
        self.open: dict[int, _Rendezvous] = {}
        """The rendezvous of transfers not yet started, by sequence number."""
        self.legs: dict[tuple[int, float], Leg] = {}
        """The leg of a block of `nbytes` sent on NoC `noc`, by (noc, nbytes)."""
        self.moving = f"moves data on net '{net}'"
        """What the engines of a transfer on the pipe wait for (deadlock reports)."""


class _Rendezvous:
    """One transfer on a pipe, made by whichever side comes first."""

    __slots__ = ("pipe", "ready", "sender", "seq")

    def __init__(self, pipe: _Pipe, seq: int) -> None:
        self.pipe = pipe
        self.seq = seq
        self.sender: tuple[Process, int, float] | None = None
        """(process, noc, bytes) once the Send is issued."""
        self.ready: dict[Core, tuple[float, Process]] = {}

    def why_receive(self) -> str:
        src = self.pipe.src
        return (
            f"waits in Receive #{self.seq} on net '{self.pipe.net}' for the Send of core "
            f"({src[0]},{src[1]})"
        )

    def why_send(self) -> str:
        missing = [c for c in self.pipe.receivers if c not in self.ready]
        return (
            f"waits in Send #{self.seq} on net '{self.pipe.net}' for receivers "
            f"{_cores(missing)} to post their Receive"
        )


class _Cursor:
    """The round-robin choice among the pipes of one net one core sends on (or is
    reached by), shared by every statement of that core."""

    __slots__ = ("cands", "k")

    def __init__(self, cands: list[_Pipe]) -> None:
        self.cands = cands
        self.k = 0

    def next(self) -> _Pipe:
        cands = self.cands
        k = self.k
        self.k = k + 1
        return cands[k % len(cands)]


class PipeHub:
    """Pipe state of one simulation."""

    def __init__(self, machine: Machine, nets: tuple[PipeNet, ...]) -> None:
        self.machine = machine
        self.nets = {n.name: n for n in nets}
        self._pipes: dict[tuple[str, int], _Pipe] = {}
        self._cursors: dict[tuple[str, Core, str], _Cursor] = {}
        self._to: dict[tuple[str, Core], list[int]] = {}
        self._from: dict[tuple[str, Core], list[int]] = {}
        for net in nets:
            for i, pipe in enumerate(net.pipes):
                dsts = tuple(c for c in pipe.receivers if c != pipe.src)
                self._pipes[(net.name, i)] = _Pipe(net.name, i, pipe.src, dsts)
                self._from.setdefault((net.name, pipe.src), []).append(i)
                for c in dsts:
                    self._to.setdefault((net.name, c), []).append(i)

    def receivers(self, net: str, pipe: int) -> tuple[Core, ...]:
        return self._pipes[(net, pipe)].receivers

    def _net(self, name: str) -> PipeNet:
        try:
            return self.nets[name]
        except KeyError:
            raise SimulationError(
                f"the program uses pipe net '{name}' but declares only "
                f"{', '.join(sorted(self.nets)) or 'no nets'}; declare it in Program.nets"
            ) from None

    def pipes_to(self, name: str, core: Core) -> list[int]:
        """Pipes of net `name` that deliver to `core`, in net order."""
        self._net(name)
        return self._to.get((name, core), [])

    def pipe(self, name: str, index: int) -> _Pipe:
        """The state of pipe `index` of net `name`."""
        self._net(name)
        return self._pipes[(name, index)]

    def cursor(self, name: str, core: Core, role: str) -> _Cursor:
        """The round-robin choice of `core`'s pipes on net `name` for `role` (send or
        receive), made once per (net, core, role)."""
        key = (name, core, role)
        cur = self._cursors.get(key)
        if cur is None:
            self._net(name)
            index = self._from if role == "send" else self._to
            cands = index.get((name, core), [])
            if not cands:
                what = "is the source of no pipe" if role == "send" else "is reached by no pipe"
                raise SimulationError(
                    f"core ({core[0]},{core[1]}) executes a {role.capitalize()} on net "
                    f"'{name}' but {what} of that net; fix the net's pipes or guard the "
                    "statement with IfCore"
                )
            cur = self._cursors[key] = _Cursor([self._pipes[(name, i)] for i in cands])
        return cur

    def open_rendezvous(self) -> list[tuple[tuple[str, int, int], _Rendezvous]]:
        """Every transfer not yet started, by (net, pipe, sequence number) (state probes)."""
        return [
            ((p.net, p.index, seq), rv) for p in self._pipes.values() for seq, rv in p.open.items()
        ]

    # ----- the two halves -------------------------------------------------------------

    def send(self, sched: Scheduler, proc: Process, pipe: _Pipe, noc: int, nbytes: float) -> Any:
        seq = pipe.send_seq + 1
        pipe.send_seq = seq
        rv = self._rendezvous(pipe, seq)
        rv.sender = (proc, noc, nbytes)
        self._try_start(sched, rv)
        return PENDING

    def receive(self, sched: Scheduler, proc: Process, pipe: _Pipe) -> Any:
        core = proc.core
        seq = pipe.recv_seq.get(core, 0) + 1
        pipe.recv_seq[core] = seq
        rv = self._rendezvous(pipe, seq)
        rv.ready[core] = (sched.now + self.machine.params.semaphore_cycles, proc)
        proc.waiting = rv.why_receive
        self._try_start(sched, rv)
        return PENDING

    @staticmethod
    def _rendezvous(pipe: _Pipe, seq: int) -> _Rendezvous:
        """The rendezvous of one transfer on a pipe, made by whichever side comes first."""
        rv = pipe.open.get(seq)
        if rv is None:
            rv = pipe.open[seq] = _Rendezvous(pipe, seq)
        return rv

    def _try_start(self, sched: Scheduler, rv: _Rendezvous) -> None:
        if rv.sender is None:
            return
        pipe = rv.pipe
        # every Receive comes from a receiver of the pipe, so the count decides (and
        # the report's list of the missing is built only when someone reads it)
        ready = rv.ready
        if len(ready) < len(pipe.receivers) or any(c not in ready for c in pipe.receivers):
            rv.sender[0].waiting = rv.why_send
            return
        del pipe.open[rv.seq]
        t = sched.now  # the last signal's arrival (max() as a loop: no list built)
        for signal, _ in ready.values():
            if signal > t:
                t = signal
        sched.at(t, self._start_data, (sched, rv))

    def _start_data(self, arg: tuple[Scheduler, _Rendezvous]) -> None:
        sched, rv = arg
        assert rv.sender is not None
        sender, noc, nbytes = rv.sender
        pipe = rv.pipe
        leg = pipe.legs.get((noc, nbytes))
        if leg is None:  # legs are immutable: one per (NoC, size) of each pipe
            dsts = pipe.receivers
            legs = self.machine.legs
            if len(dsts) == 1:
                leg = legs.send_block(noc, sender.core, dsts[0], nbytes)
            else:
                leg = legs.multicast_block(noc, sender.core, dsts, nbytes)
            pipe.legs[(noc, nbytes)] = leg
        procs = [sender, *(p for _, p in rv.ready.values())]
        t0 = sched.now
        name, moving = pipe.net, pipe.moving
        for p in procs:
            p.waiting = moving

        def done() -> None:
            now = sched.now
            for p in procs:
                p.busy += now - t0  # Process.record, inlined (one call per engine)
                if p.intervals is not None and now > t0:
                    p.record_interval(t0, now, f"{'send' if p is sender else 'receive'} {name}")
                sched.resume(p)

        self.machine.start_leg(leg, done)


def _cores(cores: list[Core]) -> str:
    return ", ".join(f"({y},{x})" for y, x in cores) or "none"


class SendReq(Request):
    """A Send on a pipe net: the sender's pipe chosen round-robin at each Send."""

    __slots__ = ("cursor", "hub", "nbytes", "noc")

    def __init__(self, hub: PipeHub, cursor: _Cursor, noc: int, nbytes: float) -> None:
        self.hub, self.cursor, self.noc, self.nbytes = hub, cursor, noc, nbytes

    def start(self, sched: Scheduler, proc: Process) -> Any:
        return self.hub.send(sched, proc, self.cursor.next(), self.noc, self.nbytes)


class ReceiveReq(Request):
    """A Receive on a pipe net: from `pipe`, or from the core's pipes round-robin."""

    __slots__ = ("cursor", "hub", "pipe")

    def __init__(self, hub: PipeHub, cursor: _Cursor | None, pipe: _Pipe | None = None) -> None:
        self.hub, self.cursor, self.pipe = hub, cursor, pipe

    def start(self, sched: Scheduler, proc: Process) -> Any:
        pipe = self.pipe
        if pipe is None:
            assert self.cursor is not None
            pipe = self.cursor.next()
        return self.hub.receive(sched, proc, pipe)
