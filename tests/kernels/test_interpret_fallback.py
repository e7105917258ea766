"""Where Helion's own interpreter cannot run a kernel (not the kernel failing), the
verification falls back to Loom's Tile IR reference; a kernel's own error does not."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from loom.errors import FrontendError
from loom.kernels.files import NoCpuKernel, _import_file, interpret_reference

EXAMPLES = Path(__file__).parents[2] / "examples" / "helion"


def test_a_tunable_block_size_falls_back_to_the_tile_ir_reference() -> None:
    module = _import_file(EXAMPLES / "split_k_tunable.py")
    run = interpret_reference(module.split_k_tunable)
    with pytest.raises(NoCpuKernel) as caught:
        run(*module.make_inputs())
    assert caught.value.reason.startswith("Helion's interpreter cannot run hl.register_tunable")
    assert "split_k_tunable.py:" in caught.value.reason


def test_a_kernel_s_own_error_is_reported_not_replaced() -> None:
    module = _import_file(EXAMPLES / "add.py")
    run = interpret_reference(module.add)
    x = torch.randn(64, 64)
    with pytest.raises(FrontendError) as caught:
        run(x, torch.randn(32, 64))  # shapes that do not broadcast: the kernel's error
    assert not isinstance(caught.value, NoCpuKernel)
