"""Scope: where a buffer lives and is pipelined, the grid body or one tile loop.

A scope is written as text in schedule.json (`pipeline` keys) and in the buffer plan:
``grid`` for the body of the tile grid, ``loop:<tile symbol>`` for the body of a tile
loop. This type is the one place that builds and reads that text.
"""

from __future__ import annotations

from dataclasses import dataclass

_LOOP = "loop:"
_GRID = "grid"


@dataclass(frozen=True)
class Scope:
    loop: str | None = None
    """Tile symbol of the innermost enclosing loop (e.g. ``tile_k``); None for the grid."""

    @classmethod
    def parse(cls, key: str) -> Scope:
        """The scope of its text form (raises ValueError for anything else)."""
        if key == _GRID:
            return cls()
        if key.startswith(_LOOP) and key[len(_LOOP) :]:
            return cls(key[len(_LOOP) :])
        raise ValueError(f"{key!r} is neither {_GRID!r} nor '{_LOOP}<tile symbol>'")

    @property
    def key(self) -> str:
        """The text form, as used in schedule.json and the buffer plan."""
        return _GRID if self.loop is None else f"{_LOOP}{self.loop}"

    @property
    def ident(self) -> str:
        """A name usable inside identifiers: the loop's tile symbol, or ``grid``."""
        return _GRID if self.loop is None else self.loop

    def __str__(self) -> str:
        return self.key
