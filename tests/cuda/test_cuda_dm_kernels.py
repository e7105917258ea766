"""Why `tileflow.scaling: dm` (the seed's DM-side scaling) is rejected: on tt-lang-sim
1.1.6 a data-movement kernel can only copy whole tiles between DRAM (or a pipe) and a
buffer block. Each case below is the smallest DM kernel that would form a scaled tile;
the control shows the same kernel with a plain tile copy runs."""

from __future__ import annotations

from typing import Any

import pytest

from loom.arch import load_arch
from loom.backends.ttlang.runner import _simulator

BUFFERS = load_arch("wormhole_n150").dataflow_buffers


def _run(ttl: Any, ttnn: Any, variant: str) -> float:
    import torch

    @ttl.operation(grid=(1, 1))
    def op(a: Any, s: Any, y: Any) -> None:
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)

        @ttl.compute()
        def comp() -> None:
            with y_dfb.wait() as y_blk, o_dfb.reserve() as o_blk:
                o_blk.store(y_blk)

        @ttl.datamovement()
        def reader() -> None:
            with a_dfb.reserve() as a_blk, s_dfb.reserve() as s_blk:
                ttl.copy(a[0, 0], a_blk).wait()
                ttl.copy(s[0, 0], s_blk).wait()
                with y_dfb.reserve() as y_blk:
                    if variant == "store":  # store an arithmetic result into a DM block
                        y_blk.store(a_blk * s_blk)
                    elif variant == "copy_product":  # copy an arithmetic result out
                        ttl.copy(a_blk * s_blk, y[0, 0]).wait()
                    elif variant == "copy_block":  # L1 block -> L1 block
                        ttl.copy(a_blk, y_blk).wait()
                    elif variant == "element":  # read one element of a tile
                        a_blk[0, 0]
                    else:  # control: a whole-tile copy from DRAM
                        ttl.copy(a[0, 0], y_blk).wait()

        @ttl.datamovement()
        def writer() -> None:
            with o_dfb.wait() as o_blk:
                ttl.copy(o_blk, y[0, 0]).wait()

    a = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    s = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    y = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    op(a, s, y)
    return float(ttnn.to_torch(y)[0, 0])


def test_a_dm_kernel_copies_a_whole_tile() -> None:
    with _simulator(1 << 20, BUFFERS) as (ttl, ttnn):
        assert _run(ttl, ttnn, "copy") == 3.0


@pytest.mark.parametrize(
    ("variant", "why"),
    [
        ("store", r"Cannot perform store\(\)"),
        ("copy_product", r"copy \(as source\): block is no longer active"),
        ("copy_block", r"No copy handler registered for \(Block, Block\)"),
        ("element", r"validation error for Block.__getitem__"),
    ],
)
def test_a_dm_kernel_cannot_form_a_scaled_tile(variant: str, why: str) -> None:
    with _simulator(1 << 20, BUFFERS) as (ttl, ttnn), pytest.raises(Exception, match=why):
        _run(ttl, ttnn, variant)
