"""Scope: where a buffer lives and is pipelined, the grid body or one tile loop.

A scope is the unit the latency model pipelines (one pipe node with its ``b_load`` and
``b_store`` knobs) and the lowering double-buffers: the body of the tile grid, or the
body of one tile loop. It owns the loop's variable and block symbol, and the buffers
loaded and stored in it. Every stage passes this type; its text form (``grid`` or
``loop:<block symbol>``) appears only in files and reports (schedule.json ``pipeline``
keys, the buffer plan), and this module is the one place that builds and reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from loom.ir.tile import ForLoop

_LOOP = "loop:"
_GRID = "grid"


@dataclass(frozen=True)
class Scope:
    block: str | None = None
    """Block (tile) symbol of the loop, e.g. ``tile_k``; None for the grid body. It names
    the scope: two scopes are equal when their block symbols are."""
    index: str | None = field(default=None, compare=False)
    """The loop variable (the tile index symbol the loop steps), None for the grid."""
    loads: tuple[str, ...] = field(default=(), compare=False)
    """Virtual buffers of the DRAM loads issued in this scope (filled by the dataflow stage)."""
    stores: tuple[str, ...] = field(default=(), compare=False)
    """Virtual buffers of the DRAM stores issued in this scope."""

    @classmethod
    def grid(cls) -> Scope:
        """The body of the tile grid (outside every tile loop)."""
        return cls()

    @classmethod
    def of(cls, loops: tuple[ForLoop, ...]) -> Scope:
        """The scope of code nested in `loops` (outermost first): the innermost loop's."""
        if not loops:
            return cls()
        return cls(loops[-1].tile.name, loops[-1].index.name)

    @classmethod
    def parse(cls, key: str) -> Scope:
        """The scope of its text form (raises ValueError for anything else)."""
        if key == _GRID:
            return cls()
        if key.startswith(_LOOP) and key[len(_LOOP) :]:
            return cls(key[len(_LOOP) :])
        raise ValueError(f"{key!r} is neither {_GRID!r} nor '{_LOOP}<tile symbol>'")

    def with_buffers(self, loads: tuple[str, ...], stores: tuple[str, ...]) -> Scope:
        return replace(self, loads=loads, stores=stores)

    @property
    def key(self) -> str:
        """The text form, as used in schedule.json and the buffer plan."""
        return _GRID if self.block is None else f"{_LOOP}{self.block}"

    @property
    def ident(self) -> str:
        """A name usable inside identifiers: the block symbol, or ``grid``."""
        return _GRID if self.block is None else self.block

    def knob(self, kind: str) -> str:
        """Name of this scope's pipeline knob `kind` (``b_load`` or ``b_store``)."""
        return f"{kind}_{self.ident}"

    def __str__(self) -> str:
        return self.key
