"""Tensors with one row per block (`loom.frontend.partials`): the block size that shapes
them is fixed before solving, a block's row of a 2-D tensor is stored as a tile row of
its own, and the host code after the loop is replayed with that size."""

from __future__ import annotations

import pytest

from loom.frontend.partials import pinned_size, register_block_size
from loom.ir.tile import Store, TileProgram, walk
from loom.kernels.examples import EXAMPLES_DIR


def _import(file: str, name: str) -> TileProgram:
    from loom.frontend import import_kernel
    from loom.kernels.files import kernels_of
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / file)
    return import_kernel(kernels_of(module)[name], module.make_inputs())


@pytest.mark.parametrize(("extent", "size"), [(128, 32), (32, 32), (48, 48), (16, 16)])
def test_the_shaping_block_is_one_tile_of_rows_where_the_extent_allows(
    extent: int, size: int
) -> None:
    assert pinned_size(extent) == size
    assert register_block_size(extent) == size == register_block_size(1, extent)


def test_a_row_per_block_is_a_tile_row_of_its_own() -> None:
    p = _import("block_partials.py", "column_dot")
    syms = {s.name: s for s in p.tile_syms}
    assert syms["tile_m"].lower == syms["tile_m"].upper == 32  # fixed before solving
    assert p.arg("partial").shape == (4, 1, 256)  # 128 rows / 32: [blocks, 1, n]
    (store,) = [op for op in walk(p.body) if isinstance(op, Store) and op.tensor == "partial"]
    assert [str(w.offset) for w in store.window] == ["tile_m_id", "0", "0"]
    assert [str(w.size) for w in store.window] == ["1", "1", "256"]


def test_a_per_block_leading_index_feeds_a_later_launch() -> None:
    p = _import("split_k_partials.py", "split_k_partials")
    first, second = p.launches()
    assert first.arg("tmp").shape == (8, 64, 64)  # k = 256 in splits of 32
    (store,) = [op for op in walk(first.body) if isinstance(op, Store) and op.tensor == "tmp"]
    assert (str(store.window[0].offset), str(store.window[0].size)) == ("tile_k_id", "1")
    assert second.arg("tmp").role == "input"


def test_the_model_charges_each_partial_row_as_whole_tiles() -> None:
    """A block's 1 x 256 fp32 row is written as 8 whole tiles (its tile row padded):
    the modeled DRAM traffic is the bf16 inputs plus 4 blocks x 8 tiles x 4096 B."""
    from loom.arch import load_arch
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.kernels.registry import resolve_kernel

    arch = load_arch("wormhole_n150")
    spec = resolve_kernel(str(EXAMPLES_DIR / "block_partials.py"), "column_dot")
    result = compile_kernel(spec, CompileOptions(arch=arch, shape=spec.default_shape, jobs=1))
    inputs = 2 * 128 * 256 * 2
    assert result.lowered.modeled_dram_bytes() == inputs + 4 * 8 * 4096
