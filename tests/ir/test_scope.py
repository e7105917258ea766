"""Scope: the grid body or one tile loop, named by its block symbol, text form in files."""

from __future__ import annotations

import pytest

from loom.ir.scope import Scope


def test_text_form_round_trips() -> None:
    assert Scope.grid().key == "grid" and Scope.parse("grid") == Scope.grid()
    loop = Scope("tile_k", "k")
    assert loop.key == "loop:tile_k" and str(loop) == "loop:tile_k"
    assert Scope.parse(loop.key) == loop
    assert loop.knob("b_load") == "b_load_tile_k" and Scope.grid().knob("b_store") == "b_store_grid"


def test_identity_is_the_block_symbol() -> None:
    """The buffers a scope owns do not change which scope it is (dict keys stay valid)."""
    owned = Scope("tile_k", "k").with_buffers(("a_tile",), ())
    assert owned == Scope("tile_k") and hash(owned) == hash(Scope("tile_k"))
    assert owned.loads == ("a_tile",) and owned != Scope("tile_n")


@pytest.mark.parametrize("text", ["loop:", "loop", "tile_k", "grid:tile_k", ""])
def test_malformed_text_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="neither 'grid' nor 'loop:<tile symbol>'"):
        Scope.parse(text)
