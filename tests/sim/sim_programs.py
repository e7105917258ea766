"""Hand-built Programs for the simulator's tests and calibration.

TEMPORARY stand-in for `loom.lower`: until lowering exists, these builders write the
per-core streams that a 2-D multicast GEMM (TT-Metal's MatmulMultiCoreReuseMultiCast
structure, and TT-Lang's matmul_mcast.py) and a few microbenchmarks lower to.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.ir.program import (
    CORE_X,
    CORE_Y,
    BinaryExpr,
    BlockRef,
    Buffer,
    Compute,
    DramTensor,
    FillExpr,
    IfCore,
    Loop,
    MatmulExpr,
    Pipe,
    PipeNet,
    Program,
    ReadDram,
    Receive,
    Reserve,
    Send,
    Stmt,
    Wait,
    WriteDram,
)
from loom.symbolic import Const, Sym, cmp, disj

TILE = 32


@dataclass(frozen=True)
class GemmConfig:
    """C[M, N] = A[M, K] @ B[K, N] on an R x C grid (sizes in elements).

    Core (y, x) owns `waves_m x waves_n` output blocks of `bm x bn` tiles (rows
    y*waves_m*bm ..., TT-Metal's per_core_M split into out blocks), walks K in blocks of
    `bk` tiles; with `mcast`, column 0 reads A and multicasts it along its row and row 0
    reads B and multicasts it down its column."""

    m: int
    n: int
    k: int
    grid: tuple[int, int]
    bm: int
    bn: int
    bk: int
    waves_m: int = 1
    waves_n: int = 1
    mcast: bool = True
    a_in_l1: bool = False
    """A already sits in the senders' L1 (TT-Metal in0 block-sharded): no DRAM read."""
    out_in_l1: bool = False
    """The output stays in L1 (TT-Metal out sharded): no DRAM write."""
    dtype: str = "bf16"
    acc_dtype: str = "bf16"
    out_dtype: str = "bf16"
    depth_a: int = 2
    depth_b: int = 2
    depth_out: int = 1
    fidelity: str = "HiFi4"
    a_on_writer: bool = False
    """Move A on the writer stream (NoC1) and B and C on the reader stream (NoC0), as
    TT-Metal does on Wormhole (DRAM reads of the row-0 B senders on NoC0)."""
    split_store: bool = False
    """Cores right of the middle column write C from A's stream (the other NoC), as
    TT-Metal's split_half does for interleaved in0."""

    def __post_init__(self) -> None:
        rows, cols = self.grid
        mt, nt, kt = self.m // TILE, self.n // TILE, self.k // TILE
        if mt != rows * self.waves_m * self.bm or nt != cols * self.waves_n * self.bn:
            raise ValueError(f"blocks do not tile the output: {self}")
        if kt % self.bk:
            raise ValueError(f"bk={self.bk} does not divide K tiles {kt}")


def gemm_program(cfg: GemmConfig) -> Program:
    rows, cols = cfg.grid
    wm = Sym("wm", 0, max(cfg.waves_m - 1, 0), 1, "index")
    wn = Sym("wn", 0, max(cfg.waves_n - 1, 0), 1, "index")
    kb = Sym("kb", 0, cfg.k // TILE // cfg.bk - 1, 1, "index")
    m0 = (CORE_Y * cfg.waves_m + wm) * cfg.bm
    n0 = (CORE_X * cfg.waves_n + wn) * cfg.bn
    mcast_a = cfg.mcast and cols > 1
    mcast_b = cfg.mcast and rows > 1

    read_a: list[Stmt] = (
        [] if cfg.a_in_l1 else [ReadDram("a", "A", m0, kb * cfg.bk, cfg.bm, cfg.bk)]
    )
    if mcast_a:
        a_body: tuple[Stmt, ...] = (
            IfCore(cmp("==", CORE_X, 0), (*read_a, Send("a", "a_net")), (Receive("a", "a_net"),)),
        )
    else:
        a_body = tuple(read_a)
    b_read = ReadDram("b", "B", kb * cfg.bk, n0, cfg.bk, cfg.bn)
    if mcast_b:
        b_body: tuple[Stmt, ...] = (
            IfCore(cmp("==", CORE_Y, 0), (b_read, Send("b", "b_net")), (Receive("b", "b_net"),)),
        )
    else:
        b_body = (b_read,)
    write_c: tuple[Stmt, ...] = (
        () if cfg.out_in_l1 else (WriteDram("out", "C", m0, n0, cfg.bm, cfg.bn),)
    )
    store: tuple[Stmt, ...] = (Wait(("out",), write_c),)
    other_store: tuple[Stmt, ...] = ()
    if cfg.split_store and cols > 2:
        right = cmp(">", CORE_X, cols // 2)
        other_store = (IfCore(right, store),)
        store = (IfCore(right, (), store),)

    def waves(body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        return (Loop(wm, Const(cfg.waves_m), (Loop(wn, Const(cfg.waves_n), body),)),)

    kloop = Const(cfg.k // TILE // cfg.bk)
    a_stream = waves((Loop(kb, kloop, (Reserve("a", a_body),)), *other_store))
    b_stream = waves((Loop(kb, kloop, (Reserve("b", b_body),)), *store))
    reader, writer = (b_stream, a_stream) if cfg.a_on_writer else (a_stream, b_stream)
    mac = BinaryExpr("add", BlockRef("acc"), MatmulExpr(BlockRef("a"), BlockRef("b")))
    compute = waves(
        (
            Reserve("acc", (Compute("acc", FillExpr(0.0, cfg.bm, cfg.bn)),)),
            Loop(kb, kloop, (Wait(("a", "b", "acc"), (Reserve("acc", (Compute("acc", mac),)),)),)),
            Wait(("acc",), (Reserve("out", (Compute("out", BlockRef("acc")),)),)),
        )
    )
    nets = []
    if mcast_a:
        nets.append(
            PipeNet(
                "a_net",
                "multicast",
                tuple(Pipe((y, 0), (y, y + 1), (1, cols)) for y in range(rows)),
            )
        )
    if mcast_b:
        nets.append(
            PipeNet(
                "b_net",
                "multicast",
                tuple(Pipe((0, x), (1, rows), (x, x + 1)) for x in range(cols)),
            )
        )
    mt, nt, kt = cfg.m // TILE, cfg.n // TILE, cfg.k // TILE
    return Program(
        kernel="gemm",
        arch="any",
        grid=cfg.grid,
        tensors=(
            DramTensor("A", (cfg.m, cfg.k), cfg.dtype, "input", mt, kt),
            DramTensor("B", (cfg.k, cfg.n), cfg.dtype, "input", kt, nt),
            DramTensor("C", (cfg.m, cfg.n), cfg.out_dtype, "output", mt, nt),
        ),
        buffers=(
            Buffer("a", cfg.bm, cfg.bk, cfg.dtype, cfg.depth_a, "load"),
            Buffer("b", cfg.bk, cfg.bn, cfg.dtype, cfg.depth_b, "load"),
            Buffer("acc", cfg.bm, cfg.bn, cfg.acc_dtype, 2, "state"),
            Buffer("out", cfg.bm, cfg.bn, cfg.out_dtype, cfg.depth_out, "store"),
        ),
        nets=tuple(nets),
        reader=reader,
        compute=compute,
        writer=writer,
        math_fidelity=cfg.fidelity,
    )


def dram_read_program(
    grid: tuple[int, int],
    blocks: int,
    block_rows: int,
    block_cols: int,
    dtype: str = "bf16",
    depth: int = 2,
) -> Program:
    """Every core streams `blocks` blocks of its own row of tile-blocks from DRAM; the
    compute engine only consumes them (a DRAM read microbenchmark)."""
    rows, cols = grid
    i = Sym("i", 0, blocks - 1, 1, "index")
    core = CORE_Y * cols + CORE_X
    tensor = DramTensor(
        "X",
        (rows * cols * block_rows * TILE, blocks * block_cols * TILE),
        dtype,
        "input",
        rows * cols * block_rows,
        blocks * block_cols,
    )
    return Program(
        kernel="dram_read",
        arch="any",
        grid=grid,
        tensors=(tensor,),
        buffers=(Buffer("x", block_rows, block_cols, dtype, depth, "load"),),
        nets=(),
        reader=(
            Loop(
                i,
                Const(blocks),
                (
                    Reserve(
                        "x",
                        (
                            ReadDram(
                                "x", "X", core * block_rows, i * block_cols, block_rows, block_cols
                            ),
                        ),
                    ),
                ),
            ),
        ),
        compute=(Loop(i, Const(blocks), (Wait(("x",), ()),)),),
        writer=(),
    )


def pipe_program(
    dst_x: tuple[int, int],
    blocks: int,
    block_tiles: int,
    cols: int,
    dtype: str = "bf16",
    receive_on: tuple[int, ...] | None = None,
) -> Program:
    """Core (0,0) sends `blocks` blocks to the cores of row 0, columns [dst_x), which
    consume them. `receive_on` limits the columns that run the Receive (a program with
    a missing receive deadlocks)."""
    i = Sym("i", 0, blocks - 1, 1, "index")
    recv_cols = tuple(range(*dst_x)) if receive_on is None else receive_on
    receiver = disj(*(cmp("==", CORE_X, c) for c in recv_cols))
    sender = cmp("==", CORE_X, 0)
    reader = (
        IfCore(sender, (Loop(i, Const(blocks), (Reserve("x", (Send("x", "net"),)),)),)),
        IfCore(receiver, (Loop(i, Const(blocks), (Reserve("x", (Receive("x", "net"),)),)),)),
    )
    consume = (IfCore(disj(sender, receiver), (Loop(i, Const(blocks), (Wait(("x",), ()),)),)),)
    return Program(
        kernel="pipe",
        arch="any",
        grid=(1, cols),
        tensors=(),
        buffers=(Buffer("x", 1, block_tiles, dtype, 2, "load"),),
        nets=(PipeNet("net", "multicast", (Pipe((0, 0), (0, 1), dst_x),)),),
        reader=reader,
        compute=consume,
        writer=(),
    )
