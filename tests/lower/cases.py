"""The schedule matrix shared by the lowering and TT-Lang tests.

Each case is a kernel, a shape, an architecture and a hand-written schedule variant
(view, block sizes, pipeline knobs, multicast loads). `FAST` runs by default (dims up to
1024), `SLOW` under `-m slow`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedules import View, kernel_program, make_schedule

from loom.ir.schedule import Schedule
from loom.ir.tile import TileProgram

GEMM_512 = {"M": 512, "N": 512, "K": 512}
DOUBLE = {"b_load": 1, "b_store": 1}
LOAD2 = {"b_load": 1}


@dataclass(frozen=True)
class Case:
    id: str
    kernel: str
    shape: dict[str, int]
    arch: str
    view: View
    blocks: dict[str, int]
    pipeline: dict[str, dict[str, int]] = field(default_factory=dict)
    multicast: tuple[str, ...] = ()
    engines: dict[str, str] = field(default_factory=dict)
    """Engines of some loads by tensor (say a `__rd` candidate's A and B on the reader)."""

    def program(self) -> TileProgram:
        return kernel_program(self.kernel, tuple(sorted(self.shape.items())))

    def schedule(self) -> Schedule:
        return make_schedule(
            self.program(),
            self.arch,
            self.view,
            self.blocks,
            self.pipeline,
            self.multicast,
            self.engines,
        )


def _gemm(id_: str, shape: dict[str, int], arch: str, view: View, blocks: tuple, **kw) -> Case:
    m, n, k = blocks
    return Case(id_, "gemm", shape, arch, view, {"tile_m": m, "tile_n": n, "tile_k": k}, **kw)


def _fa(id_: str, shape: dict[str, int], arch: str, view: View, blocks: tuple, **kw) -> Case:
    m, n = blocks
    return Case(
        id_, "flash_attention", shape, arch, view, {"tile_b": 1, "tile_m": m, "tile_n": n}, **kw
    )


def _fd(id_: str, shape: dict[str, int], arch: str, view: View, blocks: tuple, **kw) -> Case:
    s, n = blocks
    return Case(
        id_, "flash_decode", shape, arch, view, {"tile_b": 1, "tile_s": s, "tile_n": n}, **kw
    )


WH, BH, BH12 = "wormhole_n150", "blackhole_p150", "blackhole_12x10"
MN = {"y": [(8, "tile_m")], "x": [(8, "tile_n")]}
FA_S = {"B": 1, "H": 2, "S": 512, "D": 64}
FD_S = {"B": 1, "H": 8, "S": 2048, "D": 64}

FAST: tuple[Case, ...] = (
    # grid axes padded to whole waves: 16 tiles over 10 (12) cores -> 2 waves each
    _gemm(
        "gemm-bh12x10-padded-waves",
        {"M": 512, "N": 512, "K": 256},
        BH12,
        {"y": [(10, "tile_m")], "x": [(12, "tile_n")]},
        (32, 32, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("a", "b"),
    ),
    # 3 heads over 2 cores and 256 query rows in 96-row tiles over 4 cores: both padded
    _fa(
        "fa-wh-padded-heads-and-rows",
        {"B": 1, "H": 3, "S": 256, "D": 64},
        WH,
        {"y": [(2, "tile_b")], "x": [(4, "tile_m")]},
        (96, 64),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("k", "v"),
    ),
    _gemm(
        "gemm512-wh-mcast-ab-2buf",
        GEMM_512,
        WH,
        MN,
        (64, 64, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("a", "b"),
    ),
    _gemm("gemm512-wh-unicast-1buf", GEMM_512, WH, MN, (64, 64, 128)),
    # both loads on the reader, the writer only stores (a `__rd` candidate): two waves
    # per core, each a K loop of two steps, the store overlapped with the next wave
    _gemm(
        "gemm512-wh-mcast-ab-reader-only",
        {"M": 512, "N": 512, "K": 256},
        WH,
        {"y": [(4, "tile_m")], "x": [(4, "tile_n")]},
        (64, 128, 128),
        pipeline={"loop:tile_k": LOAD2, "grid": {"b_store": 1}},
        multicast=("a", "b"),
        engines={"a": "reader", "b": "reader"},
    ),
    _gemm(
        "gemm512-wh-mcast-a-2buf-store",
        GEMM_512,
        WH,
        MN,
        (64, 64, 256),
        pipeline={"loop:tile_k": LOAD2, "grid": DOUBLE},
        multicast=("a",),
    ),
    _gemm(
        "gemm1024-wh-4x4-waves",
        {"M": 1024, "N": 1024, "K": 512},
        WH,
        {"y": [(4, "tile_m")], "x": [(4, "tile_n")]},
        (128, 128, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm-bh-11x10-full",
        {"M": 640, "N": 704, "K": 256},
        BH,
        {"y": [(10, "tile_m")], "x": [(11, "tile_n")]},
        (64, 64, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm-bh12x10-full",
        {"M": 640, "N": 768, "K": 256},
        BH12,
        {"y": [(10, "tile_m")], "x": [(12, "tile_n")]},
        (64, 64, 64),
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm512-bh-8x8-sub-waves",
        GEMM_512,
        BH,
        MN,
        (32, 32, 128),
        pipeline={"loop:tile_k": LOAD2, "grid": DOUBLE},
        multicast=("b",),
    ),
    _gemm(
        "gemm-wh-mixed-radix",
        {"M": 1024, "N": 256, "K": 256},
        WH,
        {"x": [(2, "tile_n"), (4, "tile_m")], "y": [(8, "tile_m")]},
        (32, 128, 128),
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm512-wh-2d-mcast",
        GEMM_512,
        WH,
        {"x": [(4, "tile_m")], "y": [(2, "tile_m"), (4, "tile_n")]},
        (64, 128, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm512-bh12-one-kstep",
        GEMM_512,
        BH12,
        {"y": [(4, "tile_m")], "x": [(8, "tile_n")]},
        (64, 64, 512),
        pipeline={"grid": DOUBLE},
    ),
    _gemm(
        "gemm512-wh-temporal-n",
        GEMM_512,
        WH,
        {"x": [(8, "tile_m")]},
        (64, 128, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("b",),
    ),
    _fa(
        "fa-d64-wh-mcast-kv-waves",
        FA_S,
        WH,
        {"y": [(2, "tile_b")], "x": [(4, "tile_m")]},
        (64, 64),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("k", "v"),
    ),
    _fa("fa-d64-wh-unicast-1buf", FA_S, WH, {"y": [(2, "tile_b")], "x": [(8, "tile_m")]}, (64, 64)),
    _fa(
        "fa-d128-wh-mcast",
        {**FA_S, "D": 128},
        WH,
        {"y": [(2, "tile_b")], "x": [(4, "tile_m")]},
        (128, 64),
        pipeline={"loop:tile_n": LOAD2, "grid": DOUBLE},
        multicast=("k", "v"),
    ),
    # V on the writer, which then stores each wave's output one wave late (an `__sl`
    # candidate): four waves per core, the store after the next wave's first two V loads
    _fa(
        "fa-wh-stores-late",
        FA_S,
        WH,
        {"y": [(2, "tile_b")], "x": [(2, "tile_m")]},
        (64, 128),
        pipeline={"loop:tile_n": LOAD2, "grid": {"b_store": 1}},
        multicast=("k", "v"),
        engines={"k": "reader", "v": "writer"},
    ),
    _fa(
        "fa-d64-bh12-mcast",
        FA_S,
        BH12,
        {"x": [(8, "tile_m")], "y": [(2, "tile_b")]},
        (64, 128),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("k", "v"),
    ),
    _fa(
        "fa-d64-bh-one-kv-step",
        FA_S,
        BH,
        {"x": [(4, "tile_m"), (2, "tile_b")]},
        (128, 512),
        multicast=("k", "v"),
    ),
    _fd(
        "fd-bh-split8-waves-mcast-q",
        FD_S,
        BH,
        {"y": [(8, "tile_s")], "x": [(4, "tile_b")]},
        (256, 64),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("q",),
    ),
    _fd(
        "fd-bh12-split8-1buf", FD_S, BH12, {"x": [(8, "tile_b")], "y": [(8, "tile_s")]}, (256, 128)
    ),
    _fd(
        "fd-bh-2d-split-2d-mcast",
        FD_S,
        BH,
        {"x": [(2, "tile_s"), (4, "tile_b")], "y": [(4, "tile_s")]},
        (256, 128),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("q",),
    ),
    _fd(
        "fd-wh-no-split",
        FD_S,
        WH,
        {"x": [(8, "tile_b")]},
        (2048, 256),
        pipeline={"loop:tile_n": LOAD2},
    ),
    _fd(
        "fd-wh-split8-one-step",
        FD_S,
        WH,
        {"y": [(8, "tile_s")], "x": [(8, "tile_b")]},
        (256, 256),
        pipeline={"grid": DOUBLE},
    ),
    _fd(
        "fd-bh-split4-d128",
        {**FD_S, "D": 128, "S": 1024},
        BH,
        {"x": [(4, "tile_s")], "y": [(8, "tile_b")]},
        (256, 64),
        multicast=("q",),
    ),
)

SLOW: tuple[Case, ...] = (
    _gemm(
        "gemm2048-wh-mcast",
        {"M": 2048, "N": 2048, "K": 2048},
        WH,
        MN,
        (256, 256, 128),
        pipeline={"loop:tile_k": LOAD2},
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm2048-bh12-waves",
        {"M": 2560, "N": 3072, "K": 1024},
        BH12,
        {"y": [(10, "tile_m")], "x": [(12, "tile_n")]},
        (128, 128, 256),
        pipeline={"loop:tile_k": LOAD2, "grid": DOUBLE},
        multicast=("a", "b"),
    ),
    _gemm(
        "gemm-bh-10x8-sub",
        {"M": 1280, "N": 1024, "K": 1024},
        BH,
        {"y": [(10, "tile_m")], "x": [(8, "tile_n")]},
        (128, 128, 256),
        pipeline={"loop:tile_k": LOAD2, "grid": DOUBLE},
        multicast=("a", "b"),
    ),
    _fa(
        "fa-h4-s1024-d128-wh-unicast",
        {"B": 1, "H": 4, "S": 1024, "D": 128},
        WH,
        {"y": [(4, "tile_b")], "x": [(8, "tile_m")]},
        (64, 64),
    ),
    _fa(
        "fa-h8-s2048-d128-bh",
        {"B": 1, "H": 8, "S": 2048, "D": 128},
        BH,
        {"y": [(8, "tile_b")], "x": [(8, "tile_m")]},
        (128, 128),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("k", "v"),
    ),
    _fd(
        "fd-s8192-bh-split8",
        {"B": 1, "H": 8, "S": 8192, "D": 64},
        BH,
        {"y": [(8, "tile_s")], "x": [(8, "tile_b")]},
        (1024, 128),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("q",),
    ),
    _fd(
        "fd-h12-s10240-bh12-split10",
        {"B": 1, "H": 12, "S": 10240, "D": 128},
        BH12,
        {"x": [(12, "tile_b")], "y": [(10, "tile_s")]},
        (1024, 256),
        pipeline={"loop:tile_n": LOAD2},
        multicast=("q",),
    ),
)
