"""The looped realization end to end: the row kernels of examples/helion, written as
persistent Helion (`x[tile_m, :]`), verify on tt-lang-sim in both realizations, the
looped one in several chunks per row (its schedule with a smaller chunk, lowered as a
schedule file is); the flow keeps the persistent program where the model finds it
faster, and says which it picked."""

from __future__ import annotations

import dataclasses

import pytest

from loom.kernels.examples import EXAMPLES_DIR

ROW_KERNELS = ("rms_norm_residual", "layer_norm", "layer_norm_affine", "softmax", "log_sum_exp")


def _compile(kernel: str, realization: str):  # type: ignore[no-untyped-def]
    from loom.arch import load_arch
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.kernels.registry import resolve_kernel

    arch = load_arch("wormhole_n150")
    spec = resolve_kernel(str(EXAMPLES_DIR / f"{kernel}.py"), None)
    options = CompileOptions(
        arch=arch, shape=spec.default_shape, jobs=1, top_k=1, realization=realization
    )
    return spec, arch, compile_kernel(spec, options)


@pytest.mark.parametrize("kernel", ROW_KERNELS)
def test_both_realizations_verify(kernel: str) -> None:
    from loom.flows.helion import load_schedule
    from loom.flows.lowered import verify_lowered
    from loom.flows.stages import StageLog

    spec, arch, persistent = _compile(kernel, "persistent")
    assert persistent.schedule.realization == ""
    outcome = verify_lowered(spec, persistent.lowered, persistent.log)
    assert outcome.passed, outcome.message
    spec, arch, looped = _compile(kernel, "looped")
    s = looped.schedule
    assert s.realization == "looped" and "tile_x_d1" in s.block_sizes
    assert any(n.startswith("realization looped: ") for n in s.notes)
    chunked = dataclasses.replace(s, block_sizes={**s.block_sizes, "tile_x_d1": 64})
    log = StageLog()
    lowered = load_schedule(spec, chunked, arch, log)
    assert lowered.program.body != persistent.program.body
    outcome = verify_lowered(spec, lowered, log)
    assert outcome.passed, outcome.message


def test_auto_keeps_the_cheaper_realization() -> None:
    _, _, auto = _compile("softmax", "auto")
    _, _, persistent = _compile("softmax", "persistent")
    _, _, looped = _compile("softmax", "looped")
    cheaper = min(persistent, looped, key=lambda r: r.schedule.modeled_cycles)
    assert auto.schedule.modeled_cycles == cheaper.schedule.modeled_cycles
    assert auto.schedule.realization == cheaper.schedule.realization


def test_looped_where_nothing_loops_is_an_error() -> None:
    from loom.errors import ScheduleError

    with pytest.raises(ScheduleError, match="no full-extent dim"):
        _compile("add", "looped")


def test_a_store_pass_loading_apart_verifies_and_round_trips() -> None:
    """RMSNorm + residual's store pass loading its residual into a buffer of its own
    (`Schedule.buffering`, the plan the model weighs beside the shared one): the schedule
    file keeps the choice, and the lowered program matches torch on tt-lang-sim."""
    from loom.flows.helion import load_schedule
    from loom.flows.lowered import verify_lowered
    from loom.flows.stages import StageLog
    from loom.ir.schedule_file import parse_schedule

    spec, arch, looped = _compile("rms_norm_residual", "looped")
    s = dataclasses.replace(
        looped.schedule,
        buffering="apart",
        block_sizes={**looped.schedule.block_sizes, "tile_x_d1": 64},
    )
    s = parse_schedule(s.to_json(), "test")
    assert s.buffering == "apart"
    log = StageLog()
    lowered = load_schedule(spec, s, arch, log)
    res = {a.name for a in lowered.buffered.allocations if a.name.startswith("residual")}
    assert len(res) == 2  # one buffer per pass
    outcome = verify_lowered(spec, lowered, log)
    assert outcome.passed, outcome.message
