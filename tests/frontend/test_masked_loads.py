"""Masked loads (Helion's masked concatenation): each load is multiplied by its mask, and
a window shifted by `tile.index - n1` is one 32-wide tile per block, clamped at the
tensor's start and zeroed there by Loom's own mask."""

from __future__ import annotations

from loom.ir.tile import Elementwise, Load, walk
from loom.kernels.examples import EXAMPLES_DIR


def test_a_shifted_masked_load_is_a_clamped_window_times_its_masks() -> None:
    from loom.frontend import import_kernel
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "concat_masked.py")
    program = import_kernel(module.concat_masked, module.make_inputs())
    tile_n = program.grid_axis("tile_n")
    assert (tile_n.tile.lower, tile_n.tile.upper) == (32, 32)  # one tile per block
    loads = {op.tensor: op for op in walk(program.body) if isinstance(op, Load)}
    env = {"tile_m": 32, "tile_n": 32, "tile_m_id": 0}
    x_offsets = [loads["x"].window[1].offset.eval({**env, "tile_n_id": i}) for i in range(7)]
    y_offsets = [loads["y"].window[1].offset.eval({**env, "tile_n_id": i}) for i in range(7)]
    assert x_offsets == [0, 32, 64, 96, 128, 160, 192]  # past x: its zero padding
    assert y_offsets == [0, 0, 0, 0, 0, 32, 64]  # left of y: clamped to its first tile
    ops = {op.result.name: op for op in walk(program.body) if isinstance(op, Elementwise)}
    assert ops["x_masked"].op == "mul" and ops["y_masked"].op == "mul"
    inside = ops["inside"]  # Loom's own mask: tile_n.index - 128 >= 0
    assert (inside.op, inside.args[1]) == ("gt", 127.5)
    assert ops["y_masked_1"].args[0] == ops["y_masked"].result  # then the kernel's mask


def test_a_load_without_a_mask_is_the_load() -> None:
    from loom.frontend import import_kernel
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "concat_slices.py")
    program = import_kernel(module.concat_columns, module.make_inputs_concat_columns())
    names = [op.result.name for op in walk(program.body) if isinstance(op, Elementwise)]
    assert not any(name.endswith("_masked") for name in names)
