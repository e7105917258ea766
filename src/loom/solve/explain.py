"""Explain a solved schedule in source terms (paper §2.6, "interpretability").

* the bottleneck: walk the HEG from the root, following the dominant branch of every
  pipe under the chosen knobs, down to the largest primitive term;
* binding constraints: the constraints that stop a symbol from taking its next larger
  legal value (the direction that would amortise more work per transfer);
* the block-size neighbourhood: every symbol at the nearest legal value below, at and
  above the solution (up to 3^n configurations), and where the solution ranks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from loom.ir.problem import For, HegNode, Leaf, Pipe, Problem, Seq, Stage, Term, latency
from loom.symbolic import Expr


@dataclass(frozen=True)
class Bottleneck:
    path: str
    term: str
    kind: str
    cycles: int
    share: float

    def as_dict(self) -> dict[str, str]:
        return {
            "node": self.path,
            "term": self.term,
            "kind": self.kind,
            "share": f"{self.share:.3f}",
            "text": f"{self.term} [{self.kind}] in {self.path}: "
            f"{100 * self.share:.0f}% of the modeled time",
        }


def _val(e: Expr, env: dict[str, int]) -> int:
    return e.eval(env)


def _latency(node: HegNode, env: dict[str, int]) -> int:
    return latency(node).eval(env)


def bottleneck(problem: Problem, env: dict[str, int]) -> Bottleneck:
    total = max(problem.objective.eval(env), 1)
    node: HegNode = problem.heg
    path: list[str] = []
    scale = 1
    while True:
        match node:
            case For(trip=trip, body=body, name=name):
                path.append(name)
                scale *= _val(trip, env)
                node = body
            case Seq(children=children):
                if not children:
                    break
                node = max(children, key=lambda c: _latency(c, env))
            case Pipe():
                path.append(node.name)
                parts = {"load": node.load, "body": node.body, "store": node.store}
                node = max(parts.values(), key=lambda c: _latency(c, env))
            case Leaf(terms=terms) | Stage(terms=terms):
                path.append(node.name)
                best = max(terms, key=lambda t: _val(t.cycles, env), default=None)
                if best is None:
                    break
                cycles = _val(best.cycles, env) * scale
                return Bottleneck(" > ".join(path), best.what, best.kind, cycles, cycles / total)
            case _:
                break
    return Bottleneck(" > ".join(path), "fixed costs", "fixed", 0, 0.0)


def binding_constraints(problem: Problem, env: dict[str, int]) -> list[str]:
    """Why each tile size is not one step larger: the constraint its next larger
    candidate value (the next legal one, else the next multiple of its alignment that
    still divides the extent) would violate."""
    found: list[str] = []
    for name in problem.tile_names:
        sym = problem.symbols[name]
        larger = [v for v in problem.domains[name] if v > env[name]]
        if not larger:
            larger = [v for v in sym.domain() if v > env[name] and sym.upper % v == 0]
        for value in larger[:1]:
            trial = {**env, name: value}
            broken = [c for c in problem.constraints if not c.cond.eval(trial)]
            for con in broken[:1]:
                text = f"{name} = {value} would violate: {con.text}"
                if con.name == "l1":
                    text += f" (needs {problem.l1_bytes.eval(trial):,} bytes)"
                found.append(text)
    return found


def neighbourhood(problem: Problem, env: dict[str, int]) -> dict[str, object]:
    axes = []
    for name in problem.tile_names:
        domain = problem.domains[name]
        i = domain.index(env[name])
        axes.append((name, sorted(set(domain[max(i - 1, 0) : i + 2]))))
    rows = []
    for values in itertools.product(*(vals for _, vals in axes)):
        trial = {**env, **dict(zip((n for n, _ in axes), values, strict=True))}
        if all(c.cond.eval(trial) for c in problem.constraints):
            rows.append(
                (
                    problem.objective.eval(trial),
                    dict(zip((n for n, _ in axes), values, strict=True)),
                )
            )
    rows.sort(key=lambda r: (r[0], sorted(r[1].items())))
    winner = problem.objective.eval(env)
    rank = 1 + sum(1 for cycles, _ in rows if cycles < winner)
    return {
        "configurations": len(rows),
        "rank_of_solution": rank,
        "best_cycles": rows[0][0] if rows else winner,
        "worst_cycles": rows[-1][0] if rows else winner,
        "entries": [{"block_sizes": bs, "modeled_cycles": c} for c, bs in rows],
    }


def term_breakdown(problem: Problem, env: dict[str, int]) -> list[tuple[str, str, int]]:
    """(node path, term, total cycles including trip counts) for every primitive term."""
    out: list[tuple[str, str, int]] = []

    def walk(node: HegNode, path: str, scale: int) -> None:
        match node:
            case For(trip=trip, body=body, name=name):
                walk(body, f"{path} > {name}", scale * _val(trip, env))
            case Seq(children=children):
                for c in children:
                    walk(c, path, scale)
            case Pipe(load=load, body=body, store=store, name=name):
                for c in (load, body, store):
                    walk(c, f"{path} > {name}", scale)
            case Leaf(terms=terms) | Stage(terms=terms):
                for t in terms:
                    out.append((f"{path} > {node.name}", _describe(t), _val(t.cycles, env) * scale))

    walk(problem.heg, "root", 1)
    return out


def _describe(t: Term) -> str:
    return f"{t.what} [{t.kind}]"
