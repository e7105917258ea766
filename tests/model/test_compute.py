"""Compute terms (`loom.model.compute`): a matmul's pipeline fill and drain, a block's
conversion copied into a block of its own."""

from __future__ import annotations

from loom.dataflow import build_buffers
from loom.flows.helion import run_frontend
from loom.flows.stages import StageLog
from loom.ir.problem import For, Leaf, Pipe, Seq
from loom.kernels.examples import EXAMPLES_DIR
from loom.kernels.registry import resolve_kernel
from loom.mapping import enumerate_candidates
from loom.model import build_problem


def _matmul_term(node):  # type: ignore[no-untyped-def]
    match node:
        case Leaf(terms=terms):
            return next((t for t in terms if t.kind == "matmul"), None)
        case Pipe(body=body) | For(body=body):
            return _matmul_term(body)
        case Seq(children=children):
            found = [t for c in children if (t := _matmul_term(c)) is not None]
            return found[0] if found else None
    return None


def test_a_matmul_fills_and_drains_its_pipeline_once_per_step(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Two K steps of one block cost the operation's fixed part twice: its overhead, one
    tile-matmul's unpack (the pipeline's fill) and one result tile's pack (its drain)."""
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    term = _matmul_term(problem.heg)
    assert term is not None
    names = problem.tile_names
    env = {n: d[0] for n, d in problem.domains.items()}
    m_sym, n_sym = (a.tile.name for a in b.program.grid)
    (k_sym,) = (n for n in names if n not in (m_sym, n_sym))
    env.update({m_sym: 64, n_sym: 64})
    half, whole = ({**env, k_sym: k} for k in (128, 256))
    fixed = 2 * term.cycles.eval(half) - term.cycles.eval(whole)
    c = wormhole.compute
    unpack_one = 2 * c.unpack_cycles(2048)  # bf16 operand tiles
    assert fixed > c.op_overhead_cycles + unpack_one
    assert fixed - c.op_overhead_cycles - unpack_one in {
        c.pack_cycles(4096),
        c.pack_cycles(2048),
        c.pack_accumulate_cycles(4096),
        c.pack_accumulate_cycles(2048),
    }


def _terms(node):  # type: ignore[no-untyped-def]
    match node:
        case Leaf(terms=terms):
            yield from terms
        case Pipe(body=body) | For(body=body):
            yield from _terms(body)
        case Seq(children=children):
            for c in children:
                yield from _terms(c)


def test_a_block_converted_into_a_block_of_its_own_is_a_copy(wormhole) -> None:  # type: ignore[no-untyped-def]
    """Softmax keeps `x[tile_m, :].float()` in a block of its own (several statements
    read it): the lowering copies the loaded block into it, unpack, copy and pack at the
    fp32 tile's size. The bf16 result it stores converts in the division's pack: no term."""
    spec = resolve_kernel(str(EXAMPLES_DIR / "softmax.py"))
    b = build_buffers(run_frontend(spec, spec.default_shape, StageLog()))
    cand = enumerate_candidates(b, wormhole).candidates[0]
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    copies = [t for t in _terms(problem.heg) if " copy " in t.what]
    assert [t.what.split(" (")[0] for t in copies] == [f"fp32 copy {copies[0].what.split()[2]}"]
    env = {n: d[0] for n, d in problem.domains.items()}
    (tile_m,) = (a.tile.name for a in b.program.grid)
    tiles = env[tile_m] // 32 * (spec.default_shape["x[1]"] // 32)
    c = wormhole.compute
    # its statement's pipeline fills with one bf16 tile's unpack and drains one fp32 pack
    edges = c.unpack_cycles(2048) + c.pack_cycles(4096)
    assert copies[0].cycles.eval(env) == tiles * c.pack_cycles(4096) + c.op_overhead_cycles + edges


def test_a_fused_statement_costs_its_threads_over_the_whole_chain(wormhole) -> None:  # type: ignore[no-untyped-def]
    """Softmax's `exp(x - bcast(max(x)))` is one lowered statement: overhead + max(Σ
    unpack, Σ math, pack) + the pipeline's fill and drain, as the simulator costs it, not
    three operations each charged the busier of its own unpack and math."""
    spec = resolve_kernel(str(EXAMPLES_DIR / "softmax.py"))
    b = build_buffers(run_frontend(spec, spec.default_shape, StageLog()))
    cand = enumerate_candidates(b, wormhole).candidates[0]
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    env = {n: d[0] for n, d in problem.domains.items()}
    terms = [t for t in _terms(problem.heg) if t.what.split()[0] in ("reduce-max", "sub", "exp")]
    assert [t.what.split()[0] for t in terms] == ["reduce-max", "sub", "exp"]
    (tile_m,) = (a.tile.name for a in b.program.grid)
    tiles = env[tile_m] // 32 * (spec.default_shape["x[1]"] // 32)
    c = wormhole.compute
    unpack = 2 * tiles * c.unpack_cycles(4096)  # x read by the max and by the subtraction
    math = tiles * (c.reduce("max") + c.eltwise("sub"))
    math += tiles * (c.eltwise("copy") + c.eltwise("exp"))  # the broadcast, the exponent
    fill = (c.unpack_cycles(4096) * 2) // 4  # the four ops' mean unpack per tile
    drain = c.pack_cycles(4096)
    expected = max(unpack, math, tiles * c.pack_cycles(4096)) + c.op_overhead_cycles
    assert sum(t.cycles.eval(env) for t in terms) == expected + fill + drain


def _causal_terms(wormhole):  # type: ignore[no-untyped-def]
    """The causal kernel's key-loop terms at 128x128 blocks, evaluated by name."""
    from loom.dataflow import build_buffers
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel("flash_attention_causal")
    program = run_frontend(spec, {"B": 1, "H": 2, "S": 256, "D": 64}, StageLog())
    b = build_buffers(program)
    cand = enumerate_candidates(b, wormhole).candidates[0]
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    env = {n: d[0] for n, d in problem.domains.items()}
    env.update({n: 128 for n in problem.tile_names if n != "tile_b"})
    return {t.what.split(" (")[0]: t.cycles.eval(env) for t in _terms(problem.heg)}


def test_an_inline_fill_is_math_not_a_pack(wormhole) -> None:  # type: ignore[no-untyped-def]
    """The mask's `zeros_like(qk)` has no buffer: the lowering builds it in Dst inside
    the score's statement (a copy per tile on the math thread, as the simulator charges
    it), not a pack of its own. Charged as a pack, the causal mask cost 522 cycles a key
    block at 128x128 where the simulator charges 128."""
    terms = _causal_terms(wormhole)
    assert terms["fill full"] == 16 * wormhole.compute.eltwise("copy")


def test_a_statements_pack_runs_beside_its_inline_math(wormhole) -> None:  # type: ignore[no-untyped-def]
    """The score `qk - mask` is one Compute statement with the matmul and the mask ops
    inline: its pack of 16 fp32 tiles overlaps their math (the simulator charges the
    statement overhead + max(unpack, math, pack)), so the last op costs its own math,
    not the whole pack again (1 034 cycles a key block, simulated statement 4 189 against
    5 224 modeled before)."""
    terms = _causal_terms(wormhole)
    c = wormhole.compute
    assert terms["sub qk_1"] == c.op_overhead_cycles + 16 * c.eltwise("sub")
