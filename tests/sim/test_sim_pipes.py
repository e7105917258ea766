"""Gathers, rotating senders and parallel copies."""

from __future__ import annotations

import pytest

from loom.arch import Arch, load_arch
from loom.ir.program import (
    CORE_X,
    Buffer,
    DramTensor,
    IfCore,
    Loop,
    Parallel,
    Pipe,
    PipeNet,
    Program,
    ReadDram,
    Receive,
    ReceiveAll,
    ReceiveEach,
    Reserve,
    Send,
    Wait,
)
from loom.sim import simulate
from loom.symbolic import Const, Sym, cmp

IDX = Sym("i", 0, 63, 1, "index")


@pytest.fixture(scope="module")
def wh() -> Arch:
    return load_arch("wormhole_n150")


def _program(
    reader: tuple,
    compute: tuple,
    nets: tuple = (),
    cols: int = 4,
    tensors: tuple = (),
    buffers: tuple | None = None,
) -> Program:
    return Program(
        kernel="t",
        arch="wormhole_n150",
        grid=(1, cols),
        tensors=tensors,
        buffers=buffers or (Buffer("p", 2, 2, "bf16", 2, "gather"),),
        nets=nets,
        reader=reader,
        compute=compute,
        writer=(),
    )


def test_gather_delivers_every_partial_to_the_owner(wh: Arch) -> None:
    cols = 4
    net = PipeNet("g", "gather", tuple(Pipe((0, x), (0, 1), (0, 1)) for x in range(1, cols)))
    owner = cmp("==", CORE_X, 0)
    program = _program(
        reader=(IfCore(owner, (ReceiveAll("p", "g"),), (Reserve("p", (Send("p", "g"),)),)),),
        compute=(IfCore(owner, (Loop(IDX, Const(cols - 1), (Wait(("p",), ()),)),)),),
        nets=(net,),
        cols=cols,
    )
    r = simulate(program, wh)
    assert r.bytes_moved.noc_unicast == (cols - 1) * 4 * wh.tile.bytes("bf16")


def test_rotating_senders_take_turns(wh: Arch) -> None:
    """Two pipes reach core 2; its Receives take them in net order."""
    net = PipeNet("n", "multicast", (Pipe((0, 0), (0, 1), (2, 3)), Pipe((0, 1), (0, 1), (2, 3))))
    sender = cmp("<", CORE_X, 2)
    program = _program(
        reader=(
            IfCore(
                sender,
                (Reserve("p", (Send("p", "n"),)),),
                (Loop(IDX, Const(2), (Reserve("p", (Receive("p", "n"),)),)),),
            ),
        ),
        compute=(IfCore(sender, (Wait(("p",), ()),), (Loop(IDX, Const(2), (Wait(("p",), ()),)),)),),
        nets=(net,),
        cols=3,
    )
    r = simulate(program, wh)
    assert r.bytes_moved.noc_unicast == 2 * 4 * wh.tile.bytes("bf16")


def _reads(parallel: bool) -> Program:
    tensors = (
        DramTensor("A", (256, 256), "bf16", "input", 8, 8),
        DramTensor("B", (256, 256), "bf16", "input", 8, 8),
    )
    ra = ReadDram("a", "A", Const(0), Const(0), 4, 4)
    rb = ReadDram("b", "B", Const(0), Const(0), 4, 4)
    body = (Parallel((ra, rb)),) if parallel else (ra, rb)
    return _program(
        reader=(Reserve("a", (Reserve("b", body),)),),
        compute=(Wait(("a", "b"), ()),),
        cols=1,
        tensors=tensors,
        buffers=(Buffer("a", 4, 4, "bf16", 1), Buffer("b", 4, 4, "bf16", 1)),
    )


def test_parallel_copies_overlap(wh: Arch) -> None:
    together = simulate(_reads(True), wh)
    apart = simulate(_reads(False), wh)
    assert together.bytes_moved.dram_read == apart.bytes_moved.dram_read
    assert together.cycles < apart.cycles


def test_receive_each_takes_every_buffer_from_every_pipe(wh: Arch) -> None:
    cols = 3
    net = PipeNet("g", "gather", tuple(Pipe((0, x), (0, 1), (0, 1)) for x in range(1, cols)))
    owner = cmp("==", CORE_X, 0)
    program = _program(
        reader=(
            IfCore(
                owner,
                (ReceiveEach(("p", "q"), "g"),),
                (Reserve("p", (Send("p", "g"),)), Reserve("q", (Send("q", "g"),))),
            ),
        ),
        compute=(IfCore(owner, (Loop(IDX, Const(cols - 1), (Wait(("p", "q"), ()),)),)),),
        nets=(net,),
        cols=cols,
        buffers=(Buffer("p", 2, 2, "bf16", 2, "gather"), Buffer("q", 2, 1, "fp32", 2, "gather")),
    )
    r = simulate(program, wh)
    per_pipe = 4 * wh.tile.bytes("bf16") + 2 * wh.tile.bytes("fp32")
    assert r.bytes_moved.noc_unicast == (cols - 1) * per_pipe
