"""A kernel module whose reference returns several tensors (Loom's SHAPE_KEYS contract:
`benchmarks/families/rms_norm_residual.py` returns the normed rows and the new residual)
is verified output by output, each against the result in the kernel's return order."""

from __future__ import annotations

import dataclasses

from loom.eval.cases import FAMILIES_DIR


def _compiled():  # type: ignore[no-untyped-def]
    from loom.arch import load_arch
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel(str(FAMILIES_DIR / "rms_norm_residual.py"), None)
    options = CompileOptions(arch=load_arch("wormhole_n150"), shape={"M": 64, "N": 256},
                             jobs=1, top_k=1)  # fmt: skip
    return spec, compile_kernel(spec, options)


def test_each_returned_tensor_is_checked_against_its_own_reference() -> None:
    from loom.flows.lowered import verify_lowered

    spec, result = _compiled()
    outcome = verify_lowered(spec, result.lowered, result.log)
    assert outcome.passed, outcome.message

    def swapped(*args):  # type: ignore[no-untyped-def]
        out, h = spec.reference(*args)
        return h, out

    wrong = dataclasses.replace(spec, reference=swapped)
    outcome = verify_lowered(wrong, result.lowered, result.log)
    assert not outcome.passed
