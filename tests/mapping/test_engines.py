"""Which engine issues each load (`loom.mapping.engines`): the engine a candidate names
for a load is the one the lowering gives its buffer, which has a single producer."""

from __future__ import annotations

from loom.arch import Arch
from loom.dataflow import build_buffers
from loom.dataflow.looped_rows import loop_rows
from loom.flows.helion import run_frontend
from loom.flows.stages import StageLog
from loom.kernels.examples import EXAMPLES_DIR
from loom.kernels.registry import resolve_kernel
from loom.mapping import enumerate_candidates
from loom.mapping.engines import READER_ONLY


def test_a_reader_only_variant_moves_a_shared_allocation_whole(wormhole: Arch) -> None:
    """RMSNorm + residual looped: both passes load `res` into one allocation, the store
    pass's load being one a `__rd` variant moves to the reader. The variant moves the
    statistics pass's load with it, so every candidate names one engine per allocation
    (the lowering would otherwise keep the first pass's engine for both, and the model
    charge a reader the program lacks)."""
    spec = resolve_kernel(str(EXAMPLES_DIR / "rms_norm_residual.py"), None)
    looped = loop_rows(run_frontend(spec, spec.default_shape, StageLog()))
    assert looped is not None
    buffered = build_buffers(looped.program)
    allocation = buffered.load_allocations()
    (res,) = {a for a in allocation.values() if a.startswith("res")}
    assert list(allocation.values()).count(res) == 2  # both passes' loads share it
    candidates = enumerate_candidates(buffered, wormhole).candidates
    reader_only = [c for c in candidates if c.name.endswith(READER_ONLY)]
    assert reader_only
    for c in candidates:
        engines: dict[str, set[str]] = {}
        for copy in c.copies:
            if copy.op in allocation:
                engines.setdefault(allocation[copy.op], set()).add(copy.engine)
        assert all(len(e) == 1 for e in engines.values()), c.name
        if c in reader_only:
            assert engines[res] == {"reader"}, c.name
