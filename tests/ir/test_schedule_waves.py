"""grid_waves: the waves of each grid axis, blocks over the cores the mapping gives it."""

from __future__ import annotations

from loom.ir.schedule import Mapping, MeshLevel, grid_waves


def test_waves_are_blocks_over_cores_rounded_up() -> None:
    mapping = Mapping((MeshLevel("y", 0, 8, "tile_m"), MeshLevel("x", 0, 4, "tile_n")))
    extents = {"tile_m": 512, "tile_n": 512}
    # 512/96 -> 6 blocks on 8 cores: one (padded) wave; 512/32 -> 16 blocks on 4 cores: 4
    assert grid_waves(extents, mapping, {"tile_m": 96, "tile_n": 32}) == {"tile_m": 1, "tile_n": 4}
    # an axis the mapping leaves off the mesh runs every block in turn
    assert grid_waves({"tile_b": 3}, mapping, {"tile_b": 1}) == {"tile_b": 3}


def test_zigzag_deal_runs_the_flat_blocks_on_the_innermost_axis() -> None:
    # 32 heads x 16 query blocks = 512 blocks over 110 cores: runs of 5, all on tile_m
    mapping = Mapping((MeshLevel("x", 0, 11, "tile_m"), MeshLevel("y", 0, 10, "tile_m")))
    extents = {"tile_b": 32, "tile_m": 4096}
    sizes = {"tile_b": 1, "tile_m": 256}
    assert grid_waves(extents, mapping, sizes, "zigzag") == {"tile_b": 1, "tile_m": 5}
    assert grid_waves(extents, mapping, sizes) == {"tile_b": 32, "tile_m": 1}
