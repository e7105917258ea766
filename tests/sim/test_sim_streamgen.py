"""Generated stream code (loom.sim.streamgen) against the interpreter (loom.sim.interp).

A probed run (`watch`) interprets the streams; a plain run runs their generated code.
Both must give every bit of the result, and the same errors, on programs that use each
kind of statement: loops (nested, reusing a variable, of no iterations), branches on
the core and on a loop variable, waits on several buffers and on none, parallel copies,
gathers and multicasts.
"""

from __future__ import annotations

import dataclasses

import pytest
from sim_programs import GemmConfig, gemm_program, pipe_program

from loom.arch import load_arch
from loom.errors import SimulationError
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
    ReceiveEach,
    Reserve,
    Send,
    Wait,
)
from loom.sim import simulate
from loom.sim.streamgen import compile_stream
from loom.symbolic import Const, Sym, cmp

WH = load_arch("wormhole_n150")
IDX = Sym("i", 0, 63, 1, "index")
A = DramTensor("A", (256, 256), "bf16", "input", 8, 8)


def _program(reader: tuple, compute: tuple, buffers: tuple, nets: tuple = (), cols: int = 1):
    return Program(
        kernel="t",
        arch="wormhole_n150",
        grid=(1, cols),
        tensors=(A,),
        buffers=buffers,
        nets=nets,
        reader=reader,
        compute=compute,
        writer=(),
    )


def _loops() -> Program:
    read = ReadDram("a", "A", IDX, Const(0), 1, 2)
    reader = (
        Loop(
            IDX,
            Const(3),
            (
                IfCore(cmp("==", IDX, 1), (Reserve("a", (read,)),), (Reserve("a", (read, read)),)),
                Loop(IDX, Const(2), (Reserve("a", (read,)),)),  # the same variable, restored
                Loop(IDX, Const(0), (Reserve("a", (read,)),)),
            ),
        ),
    )
    compute = (Loop(IDX, Const(9), (Wait(("a",), (Wait((), ()),)),)),)
    return _program(reader, compute, (Buffer("a", 1, 2, "bf16", 2),))


def _gather() -> Program:
    cols = 3
    net = PipeNet("g", "gather", tuple(Pipe((0, x), (0, 1), (0, 1)) for x in range(1, cols)))
    owner = cmp("==", CORE_X, 0)
    both = Parallel((ReadDram("p", "A", Const(0), Const(0), 2, 2), Send("q", "g")))
    reader = (
        IfCore(
            owner,
            (ReceiveEach(("p", "q"), "g"),),
            (Reserve("p", (Send("p", "g"),)), Reserve("q", (both,))),
        ),
    )
    compute = (IfCore(owner, (Loop(IDX, Const(cols - 1), (Wait(("p", "q"), ()),)),)),)
    buffers = (Buffer("p", 2, 2, "bf16", 2, "gather"), Buffer("q", 2, 1, "fp32", 2, "gather"))
    return _program(reader, compute, buffers, (net,), cols)


PROGRAMS = {
    "loops": _loops,
    "gather": _gather,
    "pipe": lambda: pipe_program((1, 8), blocks=6, block_tiles=4, cols=8),
    "gemm": lambda: gemm_program(GemmConfig(512, 512, 512, (4, 4), 4, 4, 4)),
}


def _bits(program: Program, trace: bool, interpret: bool) -> str:
    watch = (lambda sched, procs: None) if interpret else None
    r = simulate(program, WH, trace=trace, watch=watch)
    return repr(dataclasses.replace(r, wall_seconds=0.0))


@pytest.mark.parametrize("trace", [False, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_generated_code_gives_the_interpreters_bits(name: str, trace: bool) -> None:
    program = PROGRAMS[name]()
    assert _bits(program, trace, interpret=False) == _bits(program, trace, interpret=True)


@pytest.mark.parametrize("interpret", [False, True])
def test_an_undeclared_buffer_is_reported_when_its_statement_runs(interpret: bool) -> None:
    reader = (Reserve("a", ()), IfCore(cmp("==", CORE_X, 5), (Reserve("zz", ()),)))
    ok = _program(reader, (Wait(("a",), ()),), (Buffer("a", 1, 2, "bf16", 2),))
    _bits(ok, False, interpret)  # the branch never runs: no error
    bad = dataclasses.replace(ok, reader=(Reserve("a", ()), Reserve("zz", ())))
    with pytest.raises(SimulationError, match="uses buffer 'zz', which the program does not"):
        _bits(bad, False, interpret)


def test_a_stream_python_cannot_compile_is_interpreted() -> None:
    """Python refuses more than 20 nested blocks: such a stream runs interpreted."""
    body: tuple = (Reserve("a", ()),)
    for _ in range(24):
        body = (Loop(IDX, Const(1), body),)
    assert compile_stream(body) is None
    program = _program(body, (Wait(("a",), ()),), (Buffer("a", 1, 2, "bf16", 2),))
    assert _bits(program, False, interpret=False) == _bits(program, False, interpret=True)
