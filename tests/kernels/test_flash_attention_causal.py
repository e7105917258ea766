"""Causal flash attention: its key loop stops at the query tile (a per-core trip count
in the lowered program), its mask comes from the tile indices, it matches torch's causal
SDPA on tt-lang-sim, and the model and the simulator charge it about half the work."""

from __future__ import annotations

import pytest

from loom.arch import load_arch
from loom.baselines.build import build_schedule
from loom.baselines.ttnn_sdpa import sdpa_policy
from loom.dataflow import build_buffers
from loom.flows.helion import CompileOptions, compile_kernel, run_frontend
from loom.flows.lowered import Lowered, lower_schedule, verify_lowered
from loom.flows.stages import StageLog
from loom.ir.program import Loop, walk_stmts
from loom.ir.tile import ForLoop, Load, walk
from loom.kernels.registry import resolve_kernel, source_kernel
from loom.sim import SimResult, simulate
from loom.symbolic import Const

WH, BH = "wormhole_n150", "blackhole_p150_13x10"
SHAPE = {"B": 1, "H": 2, "S": 256, "D": 64}


def test_key_loops_end_at_the_query_tile_and_indices_are_read_once() -> None:
    """The diagonal block (masked), then the blocks below it, carrying the softmax on."""
    program = run_frontend(resolve_kernel("flash_attention_causal"), SHAPE, StageLog())
    diagonal, below = [op for op in walk(program.body) if isinstance(op, ForLoop)]
    assert diagonal.begin == below.end and "tile_m_id" in below.end.free_names()
    assert below.begin == Const(0)
    assert [c.init.name for c in below.carried] == [c.result.name for c in diagonal.carried]
    masked = [op.tensor for op in walk(diagonal.body) if isinstance(op, Load)]
    assert "tile_n_index" in masked
    assert "tile_n_index" not in [op.tensor for op in walk(below.body) if isinstance(op, Load)]
    inputs = {a.name: a.shape for a in program.args if a.role == "input"}
    # the query index as a column (one per row), the key index as a row
    assert inputs["tile_m_col_index"] == (256, 1)
    assert inputs["tile_n_index"] == (1, 256)
    assert "tile_m_index" not in inputs  # the row form is never read
    loads = [op.tensor for op in walk(program.body) if isinstance(op, Load)]
    assert loads.count("tile_m_col_index") == 1


@pytest.mark.parametrize(
    ("arch", "shape"),
    [(WH, SHAPE), (BH, {"B": 2, "H": 2, "S": 512, "D": 128})],
)
def test_matches_torch_causal_sdpa_on_tt_lang_sim(arch: str, shape: dict[str, int]) -> None:
    spec = resolve_kernel("flash_attention_causal")
    result = compile_kernel(spec, CompileOptions(arch=load_arch(arch), shape=shape, jobs=1))
    p = result.lowered.lowered
    counts = [s.count for s in walk_stmts(p.compute) if isinstance(s, Loop)]
    assert any(c.free_names() & {"core_x", "core_y"} for c in counts)  # per-core trip count
    assert verify_lowered(spec, result.lowered, result.log).passed


def _ttnn_lowered(kernel: str, arch_name: str, shape: dict[str, int]) -> Lowered:
    arch, log = load_arch(arch_name), StageLog()
    policy = sdpa_policy(shape, (arch.grid_x, arch.grid_y), causal=True)  # both unicast
    causal = kernel == "flash_attention_causal"  # TTNN's one key loop (`Policy.kernel`)
    spec = source_kernel(policy.kernel) if causal else resolve_kernel(kernel)
    program = run_frontend(spec, shape, log)
    buffered = build_buffers(program)
    schedule = build_schedule(buffered, arch_name, shape, arch.matmul.default_fidelity, policy)
    return lower_schedule(program, buffered, schedule, arch, log)


def _ttnn_run(kernel: str, arch_name: str, shape: dict[str, int]) -> SimResult:
    return simulate(_ttnn_lowered(kernel, arch_name, shape).lowered, load_arch(arch_name))


def test_query_tiles_dealt_back_and_forth_match_torch_on_tt_lang_sim() -> None:
    """Two waves of query tiles (TTNN's 32 x 32 chunks: 128 query chunks on 64 cores):
    the second wave runs the tiles in mirror order (`loom.ir.deal`), so every core pairs
    an early and a late query tile; the result still matches torch, and every core's
    compute engine does the same work in the simulator (round-robin: the busiest 1.4
    times the least busy)."""
    shape = {"B": 2, "H": 8, "S": 256, "D": 64}
    lowered = _ttnn_lowered("flash_attention_causal", WH, shape)
    assert lowered.schedule.waves["tile_m"] == 2
    spec, log = resolve_kernel("flash_attention_causal"), StageLog()
    assert verify_lowered(spec, lowered, log).passed
    sim = simulate(lowered.lowered, load_arch(WH))
    busy = [c.busy for c in sim.core_busy if c.engine == "compute"]
    assert max(busy) / min(busy) < 1.05


def test_ttnn_sdpa_causal_skips_the_blocks_past_the_diagonal() -> None:
    """The same TTNN schedule (32 x 32 chunks, K/V per core) on the causal kernel: the
    key chunks past the diagonal are not run. Each core has four query chunks here
    (TTNN's zigzag deal: a core runs two pairs of 33 of the dense 4 x 32 key chunks,
    0.52), so its compute engine works 0.52 of the dense one's time, plus the mask's
    arithmetic on every chunk it runs (0.58 in the simulator). The run takes
    little less than the dense one (0.99 in the simulator): both are bound by the
    reader's blocking K and V reads (every core its own, double-buffered in cb_k_in and
    cb_v_in as TTNN's), and every key chunk also reads its index row."""
    shape = {"B": 1, "H": 8, "S": 1024, "D": 64}
    causal = _ttnn_run("flash_attention_causal", WH, shape)
    dense = _ttnn_run("flash_attention", WH, shape)
    work = (causal.busy("compute").max * causal.cycles) / (dense.busy("compute").max * dense.cycles)
    assert 0.5 < work < 0.65
    assert 0.5 < causal.cycles / dense.cycles < 1.0


def test_model_charges_the_busiest_core() -> None:
    spec = resolve_kernel("flash_attention_causal")
    shape = {"B": 1, "H": 8, "S": 1024, "D": 64}
    result = compile_kernel(spec, CompileOptions(arch=load_arch(WH), shape=shape, jobs=1))
    sim = simulate(result.lowered.lowered, load_arch(WH))
    assert 0.8 < sim.cycles / result.schedule.modeled_cycles < 1.25
