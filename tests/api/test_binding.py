"""Binding what a Python user passes: scalar keys and dtypes without a tile format."""

from __future__ import annotations

import pytest
import torch

from loom.api.binding import _random_like, scalars
from loom.errors import FrontendError


def test_list_scalars_key_a_compile() -> None:
    """A `[dim]` argument (Helion's layer_norm) keys the compile like any scalar."""
    x = torch.zeros(2, 2)
    key = scalars((x, [64], 1e-5, {"a": 1}))
    assert key == ((64,), 1e-5, repr({"a": 1}))
    assert hash(key) == hash(scalars((x, [64], 1e-5, {"a": 1})))


@pytest.mark.skipif(not hasattr(torch, "float4_e2m1fn_x2"), reason="torch has no float4")
def test_a_dtype_torch_cannot_fill_is_refused_by_name() -> None:
    packed = torch.empty(4, 4, dtype=torch.float4_e2m1fn_x2)
    expected = r"^k\.py:3: an argument is a float4_e2m1fn_x2 tensor \(4x4 .*no tile format.*bfp4"
    with pytest.raises(FrontendError, match=expected):
        _random_like(packed, torch.Generator().manual_seed(0), "k.py:3")
