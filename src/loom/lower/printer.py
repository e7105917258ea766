"""Stable text form of a Program (the `07-program.txt` artefact and a test oracle).

One block per stream, statements indented by scope, expressions in the symbolic
library's own notation, e.g.::

    reader:
      loop tile_k_id < 4:
        reserve a_tile:
          read a[4*core_y, 2*tile_k_id] 4x2 -> a_tile
"""

from __future__ import annotations

from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    BroadcastExpr,
    CExpr,
    Compute,
    FillExpr,
    IfCore,
    Loop,
    MatmulExpr,
    Parallel,
    Program,
    ReadDram,
    Receive,
    ReceiveAll,
    ReceiveEach,
    ReduceExpr,
    Reserve,
    Send,
    Stmt,
    UnaryExpr,
    Wait,
    WriteDram,
)


def format_cexpr(e: CExpr) -> str:
    match e:
        case BlockRef(buffer=b):
            return b
        case MatmulExpr(lhs=a, rhs=b, transpose_rhs=t, transpose_lhs=tl):
            lhs = f"{format_cexpr(a)}{'^T' if tl else ''}"
            return f"matmul({lhs}, {format_cexpr(b)}{'^T' if t else ''})"
        case BinaryExpr(op=op, lhs=a, rhs=b):
            return f"{op}({format_cexpr(a)}, {format_cexpr(b)})"
        case UnaryExpr(op=op, operand=a):
            return f"{op}({format_cexpr(a)})"
        case ReduceExpr(op=op, operand=a, dim=-2):
            return f"col_{op}({format_cexpr(a)})"
        case ReduceExpr(op=op, operand=a):
            return f"row_{op}({format_cexpr(a)})"
        case BroadcastExpr(operand=a, cols=c, rows=r) if r:
            return f"bcast_rows({format_cexpr(a)}, {r}x{c})"
        case BroadcastExpr(operand=a, cols=c):
            return f"bcast({format_cexpr(a)}, {c})"
        case FillExpr(value=v, rows=r, cols=c):
            return f"fill({v}, {r}x{c})"
    raise TypeError(type(e).__name__)


def _head(s: Stmt) -> str:
    match s:
        case Loop(var=v, count=n):
            return f"loop {v.name} < {n}:"
        case IfCore(cond=c):
            return f"if {c}:"
        case Reserve(buffer=b):
            return f"reserve {b}:"
        case Wait(buffers=bs):
            return f"wait {', '.join(bs)}:"
        case Parallel():
            return "parallel:"
        case ReadDram(buffer=b, tensor=t, row=r, col=c, rows=nr, cols=nc):
            return f"read {t}[{r}, {c}] {nr}x{nc} -> {b}"
        case WriteDram(buffer=b, tensor=t, row=r, col=c, rows=nr, cols=nc):
            return f"write {b} -> {t}[{r}, {c}] {nr}x{nc}"
        case Send(buffer=b, net=n):
            return f"send {b} on {n}"
        case Receive(buffer=b, net=n):
            return f"receive {b} from {n}"
        case ReceiveAll(buffer=b, net=n):
            return f"receive each source of {n} into {b}"
        case ReceiveEach(buffers=bs, net=n):
            return f"receive each source of {n} into {', '.join(bs)}"
        case Compute(dst=d, expr=e, accumulate=True):
            return f"{d} += {format_cexpr(e)}  (L1 accumulation)"
        case Compute(dst=d, expr=e):
            return f"{d} = {format_cexpr(e)}"
    raise TypeError(type(s).__name__)


def _lines(stmts: tuple[Stmt, ...], depth: int) -> list[str]:
    out: list[str] = []
    pad = "  " * depth
    for s in stmts:
        out.append(pad + _head(s))
        match s:
            case Loop(body=body) | Reserve(body=body) | Wait(body=body):
                out += _lines(body, depth + 1)
            case Parallel(copies=copies):
                out += _lines(copies, depth + 1)
            case IfCore(then=then, orelse=orelse):
                out += _lines(then, depth + 1)
                if orelse:
                    out.append(pad + "else:")
                    out += _lines(orelse, depth + 1)
    return out


def format_program(p: Program) -> str:
    lines = [f"program {p.kernel} on {p.arch}, cores {p.grid[0]}x{p.grid[1]} (y x)"]
    lines += [f"  note: {n}" for n in p.notes]
    for t in p.tensors:
        lines.append(f"tensor {t.name} {t.role} {list(t.shape)} {t.dtype}: {t.rows}x{t.cols} tiles")
    for b in p.buffers:
        lines.append(f"buffer {b.name} {b.role} {b.rows}x{b.cols} {b.dtype} x{b.depth}")
    for n in p.nets:
        lines.append(f"net {n.name} {n.kind}: {len(n.pipes)} pipes")
        for pipe in n.pipes:
            lines.append(f"  {pipe.src} -> y{list(pipe.dst_y)} x{list(pipe.dst_x)}")
    for name, body in p.streams:
        lines.append(f"{name}:")
        lines += _lines(body, 1)
    return "\n".join(lines) + "\n"
