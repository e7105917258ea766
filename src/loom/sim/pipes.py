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

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from loom.errors import SimulationError
from loom.ir.program import PipeNet
from loom.sim.engine import PENDING, Process, Request, Scheduler
from loom.sim.machine import Machine
from loom.sim.topology import Core


@dataclass
class _Rendezvous:
    sender: tuple[Process, int, float] | None = None
    """(process, noc, bytes) once the Send is issued."""
    ready: dict[Core, tuple[float, Process]] = field(default_factory=dict)


class PipeHub:
    """Pipe state of one simulation."""

    def __init__(self, machine: Machine, nets: tuple[PipeNet, ...]) -> None:
        self.machine = machine
        self.nets = {n.name: n for n in nets}
        self._rv: dict[tuple[str, int, int], _Rendezvous] = {}
        self._send_seq: dict[tuple[str, int], int] = {}
        self._recv_seq: dict[tuple[str, int, Core], int] = {}
        self._pick: dict[tuple[str, Core, str], int] = {}
        self._receivers: dict[tuple[str, int], tuple[Core, ...]] = {}
        self._to: dict[tuple[str, Core], list[int]] = {}
        self._from: dict[tuple[str, Core], list[int]] = {}
        for net in nets:
            for i, pipe in enumerate(net.pipes):
                dsts = tuple(c for c in pipe.receivers if c != pipe.src)
                self._receivers[(net.name, i)] = dsts
                self._from.setdefault((net.name, pipe.src), []).append(i)
                for c in dsts:
                    self._to.setdefault((net.name, c), []).append(i)

    def receivers(self, net: str, pipe: int) -> tuple[Core, ...]:
        return self._receivers[(net, pipe)]

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

    def _choose(self, name: str, core: Core, role: str, cands: list[int]) -> int:
        if not cands:
            what = "is the source of no pipe" if role == "send" else "is reached by no pipe"
            raise SimulationError(
                f"core ({core[0]},{core[1]}) executes a {role.capitalize()} on net '{name}' "
                f"but {what} of that net; fix the net's pipes or guard the statement "
                "with IfCore"
            )
        key = (name, core, role)
        k = self._pick.get(key, 0)
        self._pick[key] = k + 1
        return cands[k % len(cands)]

    # ----- the two halves -------------------------------------------------------------

    def send(self, sched: Scheduler, proc: Process, name: str, noc: int, nbytes: float) -> Any:
        self._net(name)
        pipe = self._choose(name, proc.core, "send", self._from.get((name, proc.core), []))
        seq = self._send_seq.get((name, pipe), 0) + 1
        self._send_seq[(name, pipe)] = seq
        rv = self._rendezvous((name, pipe, seq))
        rv.sender = (proc, noc, nbytes)
        self._try_start(sched, name, pipe, seq)
        return PENDING

    def receive(self, sched: Scheduler, proc: Process, name: str, pipe: int | None = None) -> Any:
        if pipe is None:
            pipe = self._choose(name, proc.core, "receive", self.pipes_to(name, proc.core))
        key = (name, pipe, proc.core)
        seq = self._recv_seq.get(key, 0) + 1
        self._recv_seq[key] = seq
        rv = self._rendezvous((name, pipe, seq))
        rv.ready[proc.core] = (sched.now + self.machine.params.semaphore_cycles, proc)
        proc.waiting = partial(self._why_receive, name, pipe, seq)
        self._try_start(sched, name, pipe, seq)
        return PENDING

    def _rendezvous(self, key: tuple[str, int, int]) -> _Rendezvous:
        """The rendezvous of one transfer on a pipe, made by whichever side comes first."""
        rv = self._rv.get(key)
        if rv is None:
            rv = self._rv[key] = _Rendezvous()
        return rv

    def _why_receive(self, name: str, pipe: int, seq: int) -> str:
        src = self.nets[name].pipes[pipe].src
        return f"waits in Receive #{seq} on net '{name}' for the Send of core ({src[0]},{src[1]})"

    def _why_send(self, name: str, pipe: int, seq: int, rv: _Rendezvous) -> str:
        return (
            f"waits in Send #{seq} on net '{name}' for receivers "
            f"{_cores(self._missing(name, pipe, rv))} to post their Receive"
        )

    def _missing(self, name: str, pipe: int, rv: _Rendezvous) -> list[Core]:
        return [c for c in self._receivers[(name, pipe)] if c not in rv.ready]

    def _try_start(self, sched: Scheduler, name: str, pipe: int, seq: int) -> None:
        rv = self._rv[(name, pipe, seq)]
        if rv.sender is None:
            return
        # every Receive comes from a receiver of the pipe, so the count decides (and
        # the report's list of the missing is built only when someone reads it)
        if len(rv.ready) < len(self._receivers[(name, pipe)]) or self._missing(name, pipe, rv):
            rv.sender[0].waiting = partial(self._why_send, name, pipe, seq, rv)
            return
        del self._rv[(name, pipe, seq)]
        t = max([sched.now, *(t for t, _ in rv.ready.values())])
        sched.at(t, self._start_data, (sched, name, pipe, rv))

    def _start_data(self, arg: tuple[Scheduler, str, int, _Rendezvous]) -> None:
        sched, name, pipe, rv = arg
        assert rv.sender is not None
        sender, noc, nbytes = rv.sender
        dsts = self._receivers[(name, pipe)]
        legs = self.machine.legs
        if len(dsts) == 1:
            leg = legs.write(noc, sender.core, dsts[0], nbytes, nbytes)
        else:
            leg = legs.multicast_block(noc, sender.core, dsts, nbytes)
        procs = [sender, *(p for _, p in rv.ready.values())]
        t0 = sched.now
        moving = f"moves data on net '{name}'"
        for p in procs:
            p.waiting = moving

        def done() -> None:
            for p in procs:
                p.record(t0, sched.now, f"{'send' if p is sender else 'receive'} {name}")
                sched.resume(p)

        self.machine.start_legs((leg,), done)


def _cores(cores: list[Core]) -> str:
    return ", ".join(f"({y},{x})" for y, x in cores) or "none"


class SendReq(Request):
    __slots__ = ("hub", "nbytes", "net", "noc")

    def __init__(self, hub: PipeHub, net: str, noc: int, nbytes: float) -> None:
        self.hub, self.net, self.noc, self.nbytes = hub, net, noc, nbytes

    def start(self, sched: Scheduler, proc: Process) -> Any:
        return self.hub.send(sched, proc, self.net, self.noc, self.nbytes)


class ReceiveReq(Request):
    __slots__ = ("hub", "net", "pipe")

    def __init__(self, hub: PipeHub, net: str, pipe: int | None = None) -> None:
        self.hub, self.net, self.pipe = hub, net, pipe

    def start(self, sched: Scheduler, proc: Process) -> Any:
        return self.hub.receive(sched, proc, self.net, self.pipe)
