"""TT-Lang 1.1.6 back end: Program -> TT-Lang source, run on tt-lang-sim, check vs torch.

The only package that knows TT-Lang syntax. `emit` returns the kernel source text;
`verify` writes it to a file, runs it on the simulator and compares with the reference.
"""

from __future__ import annotations

from loom.backends.ttlang.emit import TTLANG_VERSION, emit
from loom.backends.ttlang.execute import verify_launches
from loom.backends.ttlang.runner import (
    TOLERANCE,
    OutputCheck,
    VerifyResult,
    noise_note,
    run,
    verify,
    verify_outputs,
)

__all__ = [
    "TOLERANCE",
    "TTLANG_VERSION",
    "OutputCheck",
    "VerifyResult",
    "emit",
    "noise_note",
    "run",
    "verify",
    "verify_launches",
    "verify_outputs",
]
