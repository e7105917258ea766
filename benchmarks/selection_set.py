"""The set of legal schedules the judge (`selection.py`) simulates for one case: the
cases themselves, the model's pick and the candidates' optima, seeded samples of
block sizes and knobs around the best candidates' optima, and TTNN's manually tuned
configuration where the calibration tables have one for the shape."""

from __future__ import annotations

import argparse
import csv
import itertools
import random
from dataclasses import dataclass

from bench_util import CALIBRATION
from loom.arch import Arch
from loom.flows.helion import CompileResult
from loom.ir.buffers import ACC_KNOB
from loom.ir.problem import Problem
from loom.model.inputs import ProblemCache
from loom.solve.cpsat import solve_problem
from loom.symbolic.pyexpr import compile_expr

SIZES = (256, 2048, 16384)
GEMM_SHAPES = [
    {"M": m, "N": n, "K": k} for m, n, k in itertools.product(SIZES, SIZES, SIZES) if n <= m
]
ARCHS = ("wormhole_n150", "blackhole_p150_13x10")
FLASH_ATTENTION = ({"B": 4, "H": 1, "S": 4096, "D": 64}, {"B": 16, "H": 1, "S": 1024, "D": 128})
FLASH_DECODE = ({"B": 8, "H": 32, "S": 2048, "D": 64}, {"B": 24, "H": 32, "S": 4096, "D": 64})
QUICK = (
    ("gemm", "wormhole_n150", {"M": 2048, "N": 256, "K": 2048}),
    ("gemm", "wormhole_n150", {"M": 2048, "N": 2048, "K": 2048}),
    ("gemm", "blackhole_p150_13x10", {"M": 2048, "N": 256, "K": 256}),
    ("flash_decode", "wormhole_n150", FLASH_DECODE[0]),
)
TTNN_TABLES = {
    "wormhole_n150": "ttnn_matmul.csv",
    "blackhole_p150_13x10": "ttnn_matmul_p150_13x10.csv",
}


def all_cases(ttnn_shapes_only: bool = False) -> list[tuple[str, str, dict[str, int]]]:
    """The paper's cases; with `ttnn_shapes_only`, the GEMM cases are the TTNN tables'
    manual shapes instead (30 of 32 are not among the paper's 18)."""
    if ttnn_shapes_only:
        return [("gemm", a, s) for a in ARCHS for s in ttnn_shapes(a)]
    cases = [("gemm", a, s) for a in ARCHS for s in GEMM_SHAPES]
    cases += [("flash_attention", a, s) for a in ARCHS for s in FLASH_ATTENTION]
    cases += [("flash_decode", a, s) for a in ARCHS for s in FLASH_DECODE]
    return cases


@dataclass(frozen=True)
class Entry:
    """One schedule of a set: how it got there (pick, optimum, other, sample,
    ttnn-manual), its candidate's problem, its assignment and its modeled cycles."""

    label: str
    problem: Problem
    env: dict[str, int]
    modeled: int


def ttnn_shapes(arch_name: str) -> list[dict[str, int]]:
    """The bf16 shapes of the manual (tuned) rows of the architecture's TTNN table."""
    table = CALIBRATION / TTNN_TABLES.get(arch_name, "")
    if not table.is_file():
        return []
    with table.open() as f:
        keys = {
            (int(r["M"]), int(r["N"]), int(r["K"]))
            for r in csv.DictReader(f)
            if "MANUAL" in r["table"] and r["dtype_in0"] == "BFLOAT16" and r["per_core_M"]
        }
    return [{"M": m, "N": n, "K": k} for m, n, k in sorted(keys)]


def sample_assignments(
    problem: Problem, centre: dict[str, int], count: int, radius: int, rng: random.Random
) -> list[dict[str, int]]:
    """Up to `count` distinct legal assignments around `centre`: every tile size within
    `radius` legal steps of its value there (the paper's block-size neighbourhood,
    widened), pipeline knobs free."""
    names = list(problem.domains)
    checks = [compile_expr(c.cond, names) for c in problem.constraints]
    choices = []
    for n in names:
        dom = problem.domains[n]
        i = dom.index(centre[n]) if centre.get(n) in dom else 0
        choices.append(dom if n in problem.knob_names else dom[max(0, i - radius) : i + radius + 1])
    seen: set[tuple[int, ...]] = {tuple(centre.get(n, -1) for n in names)}
    out: list[dict[str, int]] = []
    space = 1
    for c in choices:
        space *= len(c)
    for _ in range(count * 40):
        if len(out) >= count or len(seen) > space:
            break
        values = tuple(rng.choice(c) for c in choices)
        if values in seen:
            continue
        seen.add(values)
        if all(check(*values) for check in checks):
            out.append(dict(zip(names, values, strict=True)))
    return out


def ttnn_entry(
    result: CompileResult, cache: ProblemCache, arch_name: str, shape: dict[str, int]
) -> Entry | None:
    """TTNN's manually tuned bf16 configuration for this GEMM shape, as a Loom schedule:
    its output block (out_block_h x out_block_w tiles; a per-core block of several output
    blocks runs them as waves), K block, double-buffered inputs, and its accumulator in the
    output block in bf16 (packer_l1_acc with fp32_dest_acc_en=False: placement `output`)
    where the problem offers that placement (`--accumulate output`), else the placement
    closest to it."""
    table = CALIBRATION / TTNN_TABLES.get(arch_name, "")
    if not table.is_file() or set(shape) != {"M", "N", "K"}:
        return None
    with table.open() as f:
        rows = [
            r
            for r in csv.DictReader(f)
            if "MANUAL" in r["table"]
            and r["dtype_in0"] == "BFLOAT16"
            and (int(r["M"]), int(r["K"]), int(r["N"])) == (shape["M"], shape["K"], shape["N"])
            and r["per_core_M"]
        ]
    if not rows:
        return None
    r = rows[0]
    gx, gy = int(r["grid_x"]), int(r["grid_y"])
    blocks = {
        "M": int(r["out_block_h"]) * 32,
        "N": int(r["out_block_w"]) * 32,
        "K": int(r["in0_block_w"]) * 32,
    }
    m_sym, n_sym = (a.tile.name for a in result.program.grid)
    for cand in result.candidates.candidates:
        if cand.mapping.cores_y != gy or cand.mapping.cores_x != gx:
            continue
        if not all(lv.axis == m_sym for lv in cand.mapping.levels_of("y")):
            continue
        if not all(lv.axis == n_sym for lv in cand.mapping.levels_of("x")):
            continue
        if not all(c.mode == "multicast" for c in cand.copies if c.kind == "load"):
            continue
        problem = cache.build(cand)
        (k_sym,) = (n for n in problem.tile_names if n not in (m_sym, n_sym))
        env = {m_sym: blocks["M"], n_sym: blocks["N"], k_sym: blocks["K"]}
        for knob in problem.knob_names:
            env[knob] = 1 if knob.startswith("b_load") and 1 in problem.domains[knob] else 0
            if knob.startswith(ACC_KNOB):
                env[knob] = max(problem.domains[knob])
        for name, dom in problem.domains.items():
            env.setdefault(name, dom[0])
        if problem.admits(env):
            return Entry("ttnn-manual", problem, env, int(problem.objective.eval(env)))
    return None


def build_set(
    result: CompileResult,
    arch: Arch,
    args: argparse.Namespace,
    shape: dict[str, int],
    arch_name: str,
) -> tuple[list[Entry], str]:
    """The pick first, then the candidates' optima, samples and TTNN's configuration."""
    rng = random.Random(args.seed)
    solved = list(result.ranking.top)
    pick_sol, pick_problem = solved[0]
    entries = [Entry("pick", pick_problem, pick_sol.assignment, pick_sol.cycles)]
    for s, p in solved[1:]:
        entries.append(Entry("optimum", p, s.assignment, s.cycles))
    seen = {s.candidate for s, _ in solved}
    rest = [c for c in result.candidates.candidates if c.name not in seen]
    cache = ProblemCache(result.buffered, arch, result.schedule.math_fidelity, result.problem.flops)
    for cand in rng.sample(rest, min(len(rest), args.others)):
        p = cache.build(cand)
        s = solve_problem(p, None, 10.0, 0)
        if s.solved:
            entries.append(Entry("other", p, s.assignment, s.cycles))
            solved.append((s, p))
    for s, p in result.ranking.top[: args.sampled]:
        objective = compile_expr(p.objective, list(p.domains))
        for env in sample_assignments(p, s.assignment, args.samples, args.radius, rng):
            cycles = int(objective(*(env[n] for n in p.domains)))
            entries.append(Entry("sample", p, env, cycles))
    more = [c for c in rest if c.name not in {e.problem.candidate.name for e in entries}]
    rng.shuffle(more)
    while len(entries) < args.min_set and more:
        cand = more.pop()
        p = cache.build(cand)
        s = solve_problem(p, None, 10.0, 0)
        if s.solved:
            entries.append(Entry("other", p, s.assignment, s.cycles))
    ttnn = ttnn_entry(result, cache, arch_name, shape)
    note = "no TTNN tuned config in the tables"
    if ttnn is not None:
        entries.append(ttnn)
        note = "TTNN tuned config included"
    elif set(shape) == {"M", "N", "K"} and _has_ttnn_row(arch_name, shape):
        note = "TTNN tuned config not expressible"
    return entries, note


def _has_ttnn_row(arch_name: str, shape: dict[str, int]) -> bool:
    table = CALIBRATION / TTNN_TABLES.get(arch_name, "")
    if not table.is_file():
        return False
    with table.open() as f:
        return any(
            "MANUAL" in r["table"]
            and (int(r["M"]), int(r["K"]), int(r["N"])) == (shape["M"], shape["K"], shape["N"])
            for r in csv.DictReader(f)
        )
