"""Compute terms (`loom.model.compute`): a matmul's pipeline fill and drain."""

from __future__ import annotations

from loom.ir.problem import For, Leaf, Pipe, Seq
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
