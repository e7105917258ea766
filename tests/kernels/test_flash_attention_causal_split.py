"""Causal flash attention with its key loop split at the diagonal (two loops carrying
the online softmax from one to the other): one state buffer per carried value across
both loops, one scaled query block, K and V each in one buffer, the mask computed only
on the diagonal block; it matches torch on tt-lang-sim, the first query tile (no key
block below its diagonal) included, and the simulator charges it less than the kernel
that masks every key block."""

from __future__ import annotations

from loom.arch import load_arch
from loom.flows.helion import CompileOptions, compile_kernel
from loom.flows.lowered import verify_lowered
from loom.ir.program import IfCore, walk_stmts
from loom.kernels.registry import KernelSpec, resolve_kernel, source_kernel
from loom.sim import simulate

WH = "wormhole_n150"


def _compiled(spec: KernelSpec, shape: dict[str, int]):  # type: ignore[no-untyped-def]
    return spec, compile_kernel(spec, CompileOptions(arch=load_arch(WH), shape=shape, jobs=1))


def test_split_key_loop_shares_state_and_matches_torch_on_tt_lang_sim() -> None:
    spec, result = _compiled(
        resolve_kernel("flash_attention_causal"), {"B": 1, "H": 2, "S": 256, "D": 64}
    )
    buffered = result.lowered.buffered
    states = [b for b in buffered.buffers if b.role == "state"]
    assert sorted(b.name for b in states) == ["acc", "l_i", "m_i"]
    assert len([b for b in buffered.buffers if b.name.startswith("q_tile_scaled")]) == 1
    loads = {a.name for a in buffered.allocations if a.role == "load"}
    assert "k_tile_k_tile_1" in loads and "v_tile_v_tile_1" in loads
    p = result.lowered.lowered
    # the diagonal loop hands m_i on only where the loop below the diagonal runs
    guarded = [s for s in walk_stmts(p.compute) if isinstance(s, IfCore)]
    assert guarded
    assert verify_lowered(spec, result.lowered, result.log).passed


def test_split_key_loop_is_faster_than_masking_every_block() -> None:
    shape = {"B": 1, "H": 8, "S": 1024, "D": 64}
    arch = load_arch(WH)
    _, split = _compiled(resolve_kernel("flash_attention_causal"), shape)
    _, every = _compiled(source_kernel("flash_attention_causal_ttnn"), shape)  # one key loop
    a = simulate(split.lowered.lowered, arch)
    b = simulate(every.lowered.lowered, arch)
    assert a.cycles < 0.95 * b.cycles
