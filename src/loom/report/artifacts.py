"""Text artifacts of the stages (`--dump-dir`): 01_dataflow … 07_solver.log."""

from __future__ import annotations

import json

from loom.ir.buffers import BufferedProgram
from loom.ir.candidate import Candidate, CandidateSet
from loom.ir.printer import TilePrinter, sym_decl
from loom.ir.problem import For, HegNode, Leaf, Pipe, Problem, Seq, Stage
from loom.ir.solution import Solution
from loom.ir.tile import Load, Op, Store, accesses


class DataflowPrinter(TilePrinter):
    """The TileProgram with the virtual-buffer protocol made explicit (stage 01)."""

    def __init__(self, buffered: BufferedProgram) -> None:
        super().__init__(buffered.program)
        self.buffered = buffered

    def op(self, op: Op) -> None:
        for v in op.operands():
            vb = self.buffered.buffer_of(v.name)
            if vb is not None:
                self.emit(f'"loom.vb.acquire"() {{vb = @{vb.name}, value = "{v.name}"}} : () -> ()')
        for r in op.results():
            vb = self.buffered.buffer_of(r.name)
            if vb is not None:
                self.emit(f'"loom.vb.reserve"() {{vb = @{vb.name}, value = "{r.name}"}} : () -> ()')
        super().op(op)
        for r in op.results():
            vb = self.buffered.buffer_of(r.name)
            if vb is not None:
                self.emit(f'"loom.vb.commit"() {{vb = @{vb.name}, value = "{r.name}"}} : () -> ()')
        for v in op.operands():
            vb = self.buffered.buffer_of(v.name)
            if vb is not None:
                self.emit(f'"loom.vb.release"() {{vb = @{vb.name}, value = "{v.name}"}} : () -> ()')


def print_dataflow(buffered: BufferedProgram) -> str:
    return DataflowPrinter(buffered).print()


def print_buffers(buffered: BufferedProgram) -> str:
    lines = [
        "// Virtual buffers: role, engines, layout (batch x rows x cols), dtype, pipe node, "
        "lifetime"
    ]
    for vb in buffered.buffers:
        lines.append(
            f"vb @{vb.name}: {vb.role} {vb.producer}->{vb.consumer} {vb.layout} {vb.dtype} "
            f"scope={vb.scope} live=[{vb.birth}, {vb.death}] values={', '.join(vb.values)}"
        )
    lines.append("")
    lines.append(
        "// Physical L1 allocations (blocks of `tiles` tiles; load/store ones double with "
        "b_load/b_store)"
    )
    for a in buffered.allocations:
        lines.append(
            f"alloc @{a.name}: tiles = {a.tiles}, dtype = {a.dtype}, role = {a.role}, "
            f"scope = {a.scope}, base depth = {a.base_depth}, holds {', '.join(a.buffers)}"
        )
    lines.append("")
    lines.append(
        f"// Inlined into their consumer (no buffer): {', '.join(buffered.inlined) or 'none'}"
    )
    return "\n".join(lines) + "\n"


def print_mapping(cs: CandidateSet, cand: Candidate) -> str:
    """Stage 03: the grid split into spatial levels and temporal waves."""
    p = cs.buffered.program
    lines = [
        f"// candidate {cand.name}",
        f"// axis order (priority first): {', '.join(cand.order)}",
    ]
    for s in cs.scores:
        lines.append(
            f"// score {s.axis}: parallel_extent={s.parallel_extent} reuse_volume={s.reuse_volume} "
            f"reuse_count={s.reuse_count}"
        )
    for sym in p.tile_syms:
        lines.append(sym_decl(sym))
    for lv in cand.mapping.levels:
        lines.append(
            f'"loom.spatial"() {{physical_dim = @dim_{lv.dim}, logical_level = {lv.level} : i64, '
            f"size = {lv.size} : index, axis = @{lv.axis}}} : () -> ()"
        )
    for axis in p.grid:
        name = axis.tile.name
        levels = (
            " + ".join(
                f"{lv.dim}{lv.level}*{cand.mapping.radix(lv)}"
                for lv in cand.mapping.axis_levels(name)
            )
            or "0"
        )
        lines.append(
            f'"loom.temporal"() {{axis = @{name}, waves = "{cand.waves[name]}", '
            f'logical = "{levels} + wave_{name.removeprefix("tile_")}*{cand.spatial[name]}"}}'
            " : () -> ()"
        )
    return "\n".join(lines) + "\n"


def print_reuse(cs: CandidateSet, cand: Candidate) -> str:
    ops = accesses(cs.buffered.program.body)
    lines = [f"// reuse of every access in {cand.name}"]
    for info, copy in zip(cs.accesses, cand.copies, strict=True):
        op = ops[info.op]
        where = f"line {op.line}" if isinstance(op, Load | Store) else "gather"
        lines.append(
            f'"loom.subview"() {{tensor = "{info.tensor}", kind = "{info.kind}", depends_on = '
            f'[{", ".join(info.grid_axes + info.loop_deps)}], reuse = "{copy.reuse}"}}'
            f" : () -> ()  // {where}"
        )
    return "\n".join(lines) + "\n"


def print_multicast(cand: Candidate) -> str:
    lines = [f"// copies of {cand.name}"]
    for c in cand.copies:
        lines.append(
            f'"loom.copy"() {{tensor = "{c.tensor}", kind = "{c.kind}", mode = "{c.mode}", '
            f"area = [{c.area[0]}, {c.area[1]}], levels = [{', '.join(c.levels)}], "
            f'region = "{c.region}"}} : () -> ()'
        )
    return "\n".join(lines) + "\n"


def candidates_json(cs: CandidateSet) -> str:
    data = {
        "kernel": cs.buffered.program.name,
        "candidates_total": cs.candidates_total,
        "candidates_after_pruning": len(cs.candidates),
        "rejected_views": cs.rejected,
        "axis_scores": [vars(s) for s in cs.scores],
        "orders": [list(o) for o in cs.orders],
        "candidates": [candidate_dict(c) for c in cs.candidates],
    }
    return json.dumps(data, indent=2) + "\n"


def candidate_dict(c: Candidate) -> dict[str, object]:
    return {
        "name": c.name,
        "cores": [c.mapping.cores_y, c.mapping.cores_x],
        "view": c.mapping.label(),
        "levels": [vars(lv) for lv in c.mapping.levels],
        "order": list(c.order),
        "spatial": c.spatial,
        "waves": {a: str(w) for a, w in c.waves.items()},
        "copies": [
            {
                "tensor": p.tensor,
                "kind": p.kind,
                "mode": p.mode,
                "area": list(p.area),
                "region": p.region,
                "reuse": str(p.reuse),
            }
            for p in c.copies
        ],
    }


def print_heg(node: HegNode, indent: int = 0) -> str:
    pad = "  " * indent
    match node:
        case For(name=name, trip=trip, body=body):
            return f"{pad}for {name} x ({trip}):\n" + print_heg(body, indent + 1)
        case Seq(children=children):
            return "".join(print_heg(c, indent) for c in children)
        case Pipe(name=name, load=load, body=body, store=store, b_load=bl, b_store=bs):
            return (
                f"{pad}pipe {name} [knobs {bl.name}, {bs.name}]:\n"
                + print_heg(load, indent + 1)
                + print_heg(body, indent + 1)
                + print_heg(store, indent + 1)
            )
        case Stage(name=name, terms=terms, cycles=cycles):
            head = f"{pad}{name} = {cycles}\n"
            return head + "".join(f"{pad}  - {t.kind}: {t.what} = {t.cycles}\n" for t in terms)
        case Leaf(name=name, terms=terms):
            return f"{pad}{name}:\n" + "".join(
                f"{pad}  - {t.kind}: {t.what} = {t.cycles}\n" for t in terms
            )
    return f"{pad}{node.name}\n"


def print_problem(problem: Problem) -> str:
    lines = [
        f"// problem of {problem.candidate.name}",
        "minimize T =",
        f"  {problem.objective}",
        "",
    ]
    lines.append("domains:")
    lines += [f"  {n} in {list(d)}" for n, d in problem.domains.items()]
    lines.append("subject to:")
    lines += [f"  [{c.name}] {c.cond}    // {c.text}" for c in problem.constraints]
    lines.append(f"L1 bytes = {problem.l1_bytes}")
    return "\n".join(lines) + "\n"


def solver_log(solutions: tuple[Solution, ...]) -> str:
    lines = ["candidate\tstatus\tcycles\tlower_bound\tassignment\treason"]
    for s in sorted(
        solutions, key=lambda s: (s.status not in ("optimal", "feasible"), s.cycles, s.candidate)
    ):
        assign = ",".join(f"{k}={v}" for k, v in s.assignment.items())
        lines.append(
            f"{s.candidate}\t{s.status}\t{s.cycles}\t{s.lower_bound}\t{assign}\t{s.reason}"
        )
    return "\n".join(lines) + "\n"
