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
    """RMSNorm + residual looped, its store pass loading apart (`build_buffers`): both
    passes load the row chunk `x` into one allocation (on the reader), and `res` into
    one each (the plan deals the first pass's to the writer, where the store pass's
    would wait behind the stores, `loom.dataflow.concretize.unshare_stored_loads`;
    the shared plan is the other candidate plan). Every candidate names one engine
    per allocation (a circular buffer has one producer: the lowering gives it the
    engine of its first load, and the model must charge that), and a `__rd` variant
    moves the store pass's `res` to the reader while the first pass's stays on the
    writer, the two streaming in parallel."""
    spec = resolve_kernel(str(EXAMPLES_DIR / "rms_norm_residual.py"), None)
    looped = loop_rows(run_frontend(spec, spec.default_shape, StageLog()))
    assert looped is not None
    shared = build_buffers(looped.program).load_allocations()
    assert len(set(shared.values())) == 3  # x, res and the weight
    buffered = build_buffers(looped.program, apart=True)
    allocation = buffered.load_allocations()
    (x,) = {a for a in allocation.values() if a.startswith("x")}
    assert list(allocation.values()).count(x) == 2  # both passes' loads share it
    res_stats, res_store = sorted({a for a in allocation.values() if a.startswith("res")})
    candidates = enumerate_candidates(buffered, wormhole).candidates
    reader_only = [c for c in candidates if c.name.endswith(READER_ONLY)]
    assert reader_only
    apart = 0
    for c in candidates:
        engines: dict[str, set[str]] = {}
        for copy in c.copies:
            if copy.op in allocation:
                engines.setdefault(allocation[copy.op], set()).add(copy.engine)
        assert all(len(e) == 1 for e in engines.values()), c.name
        if c in reader_only:
            assert engines[res_store] == {"reader"}, c.name
            apart += engines[res_stats] == {"writer"}
    assert apart
