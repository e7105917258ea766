"""`verify_launches` refuses tensors it cannot carry between launches, before running."""

from __future__ import annotations

import dataclasses

import pytest

from loom.backends.ttlang import verify_launches
from loom.errors import VerificationError
from loom.ir.program import DramTensor, Program


def _program(dtype: str) -> Program:
    t = DramTensor("X", (32, 32), dtype, "output", 1, 1)
    return Program("k", "wormhole_n150", (1, 1), (t,), (), (), (), (), ())


def test_block_float_tensors_in_a_launch_sequence_are_refused() -> None:
    import torch

    first, second = _program("fp32"), _program("bfp8")
    with pytest.raises(VerificationError, match=r"runs as 2 launches.*X \(bfp8\)"):
        verify_launches((first, second), {}, {"X": torch.zeros(32, 32)})
    int32 = dataclasses.replace(
        second, tensors=(dataclasses.replace(second.tensors[0], dtype="int32"),)
    )
    with pytest.raises(VerificationError, match=r"X \(int32\)"):
        verify_launches((first, int32), {}, {"X": torch.zeros(32, 32)})
