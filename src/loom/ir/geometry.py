"""The tile edge: the one place that says Loom computes on 32x32 tiles.

Every engine of Wormhole and Blackhole reads, computes and writes 32x32 tiles, whatever
the dtype (the dtype changes only the bytes per tile, :attr:`loom.arch.Arch.tile`).
Modules that need the edge before an architecture is known (the frontend's alignment
check, DRAM tile indexing, the tt-lang-sim runner) import it from here.
"""

from __future__ import annotations

TILE = 32
"""Rows and columns of one tile, in elements."""
