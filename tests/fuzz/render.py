"""Render a grammar value (`grammar.Program`) as a Helion file Loom takes as it is.

The file defines one `@helion.kernel`, a seeded `make_inputs()` and the program's own
grammar value as `FUZZ_PROGRAM` (its repr), so a failing program written by
benchmarks/fuzz.py is both a file `loom verify FILE` runs and a case a test replays. No
`reference` is rendered: `loom verify` then compares with Helion's interpret mode (the
same kernel run eagerly in CPU torch), so the fuzzer never restates the semantics.

Domain guards are part of the rendering, not of the grammar: `log`, `sqrt`, `rsqrt`,
`reciprocal`, negative and fractional powers and the divisor of `/` read `|x| + 1` (or
`|x|`), and `exp` of a computed value is clamped to [-6, 6], so values stay finite and
a mismatch is Loom's, not the inputs'.
"""

from __future__ import annotations

import hashlib

from .grammar import (
    Binary,
    Const,
    Expr,
    Family,
    LeadingReduce,
    Leaf,
    LoopReduce,
    Mask,
    Matmul,
    Pointwise,
    Program,
    Reduce,
    Refused,
    Scalar,
    SliceReduce,
    Unary,
    Where,
)

TORCH_DTYPE = {
    "bf16": "torch.bfloat16",
    "fp16": "torch.float16",
    "fp32": "torch.float32",
    "int32": "torch.int32",
    "int64": "torch.int64",
}
_UNARY = {
    "exp": "torch.exp({})",
    "exp2": "torch.exp2({})",
    "log": "torch.log(torch.abs({}) + 1.0)",
    "sqrt": "torch.sqrt(torch.abs({}))",
    "rsqrt": "torch.rsqrt(torch.abs({}) + 1.0)",
    "reciprocal": "torch.reciprocal(torch.abs({}) + 1.0)",
    "abs": "torch.abs({})",
    "neg": "-({})",
    "relu": "torch.relu({})",
    "sigmoid": "torch.sigmoid({})",
    "tanh": "torch.tanh({})",
    "silu": "torch.nn.functional.silu({})",
    "gelu": "torch.nn.functional.gelu({})",
    "gelu_tanh": 'torch.nn.functional.gelu({}, approximate="tanh")',
    "square": "torch.square({})",
    "pow2": "({}) ** 2",
    "pow3": "({}) ** 3",
    "pow_half": "torch.abs({}) ** 0.5",
    "pow_neg1": "(torch.abs({}) + 1.0) ** -1",
    "clamp": "torch.clamp({}, -1.5, 1.5)",
    "clamp_min": "torch.clamp_min({}, -0.5)",
    "clamp_max": "torch.clamp_max({}, 0.5)",
    "float": "({}).float()",
}
_BINARY = {
    "add": "({}) + ({})",
    "sub": "({}) - ({})",
    "mul": "({}) * ({})",
    "div": "({}) / (torch.abs({}) + 1.0)",
    "maximum": "torch.maximum({}, {})",
    "minimum": "torch.minimum({}, {})",
}
_SCALAR_BINARY = {
    "add": "({}) + {}",
    "sub": "({}) - {}",
    "mul": "({}) * {}",
    "div": "({}) / {}",
    "maximum": "torch.clamp_min({}, {})",
    "minimum": "torch.clamp_max({}, {})",
}
_COMPARE = {"gt": ">", "lt": "<", "ge": ">=", "le": "<="}


def kernel_name(program: Program) -> str:
    return "fz_" + hashlib.sha256(repr(program).encode()).hexdigest()[:10]


class _Window:
    """How leaves and masks read inside one family's loop body."""

    def __init__(self, program: Program, tile: str, row: str, col: str, masks: dict[str, str]):
        self.program, self.tile, self.row, self.col, self.masks = program, tile, row, col, masks

    def leaf(self, index: int) -> str:
        spec = self.program.leaves[index]
        if spec.kind == "acc":
            return "acc"
        name = f"x{index}"
        if spec.kind == "col":  # a 1-D tile of rows, broadcast across the columns
            cast = ".float()" if spec.upcast else ""
            return f"{name}[{self.col}]{cast}[:, None]"
        text = f"{name}{self.tile if spec.kind == 'tile' else self.row}"
        return f"{text}.float()" if spec.upcast else text

    def expr(self, e: Expr) -> str:
        match e:
            case Leaf(index=i):
                return self.leaf(i)
            case Unary(op=op, arg=arg):
                inner = self.expr(arg)
                loaded = isinstance(arg, Leaf) and self.program.leaves[arg.index].kind != "acc"
                if op in ("exp", "exp2") and not loaded:  # a load is randn; acc grows with K
                    inner = f"torch.clamp({inner}, -6.0, 6.0)"
                return _UNARY[op].format(inner)
            case Binary(op=op, lhs=lhs, rhs=Const(value=v)):
                return _SCALAR_BINARY[op].format(self.expr(lhs), repr(_divisor(op, v)))
            case Binary(op=op, lhs=lhs, rhs=Scalar(index=i)):
                if op == "div":
                    return f"({self.expr(lhs)}) / (abs(s{i}) + 1.0)"
                return _SCALAR_BINARY[op].format(self.expr(lhs), f"s{i}")
            case Binary(op=op, lhs=lhs, rhs=rhs):
                assert not isinstance(rhs, Const | Scalar)
                return _BINARY[op].format(self.expr(lhs), self.expr(rhs))
            case Where(cmp=cmp, lhs=lhs, rhs=rhs, then=then, other=other):
                cond = f"({self.expr(lhs)}) {_COMPARE[cmp]} ({self.expr(rhs)})"
                return f"torch.where({cond}, {self.expr(then)}, {self.expr(other)})"
            case Mask(axis=axis, limit=limit, arg=arg):
                return f"torch.where({self.masks[axis]} < {limit}, {self.expr(arg)}, 0.0)"
        raise TypeError(e)


def _divisor(op: str, value: float) -> float:
    return value if op != "div" or abs(value) >= 0.25 else 2.0


def leaf_shape(program: Program, index: int) -> tuple[int, ...]:
    """The shape of the tensor leaf `index` reads."""
    kind = program.leaves[index].kind
    dims = program.dims
    family = program.family
    if kind == "row":
        return (dims[-1],)
    if kind == "col":
        return (dims[-2],)
    if isinstance(family, Pointwise) and family.rank == 1:
        return (dims[-1],)
    return dims


def _out(name: str, shape: tuple[int, ...], dtype: str) -> str:
    dims = ", ".join(str(d) for d in shape)
    return f"    {name} = torch.empty([{dims}], dtype={TORCH_DTYPE[dtype]}, device=DEVICE.device)"


def _store(value: str, dtype: str) -> str:
    return f"({value}).to({TORCH_DTYPE[dtype]})" if dtype not in ("int64", "int32") else value


def _pointwise(p: Program, f: Pointwise) -> tuple[list[str], list[str], list[str]]:
    if f.rank == 1:
        loop, index = f"for tile_n in hl.tile({p.dims[-1]}):", "[tile_n]"
        win = _Window(p, index, "", "", {"n": "tile_n.index"})
    elif f.rank == 2:
        loop, index = (
            f"for tile_m, tile_n in hl.tile([{p.dims[0]}, {p.dims[1]}]):",
            "[tile_m, tile_n]",
        )
        win = _Window(p, index, "[tile_n][None, :]", "tile_m", _MASKS2)
    else:
        loop = "for tile_b, tile_m, tile_n in hl.tile([%d, %d, %d], block_size=[1, None, None]):"
        loop, index = loop % p.dims, "[tile_b, tile_m, tile_n]"
        win = _Window(p, index, "", "", _MASKS2)
    shape = (p.dims[-1],) if f.rank == 1 else p.dims
    outs = [_out(f"out{i}", shape, o.dtype) for i, o in enumerate(f.outputs)]
    body = [f"out{i}{index} = {_store(win.expr(o.expr), o.dtype)}" for i, o in enumerate(f.outputs)]
    return outs, [loop], body


_MASKS2 = {"n": "tile_n.index", "m": "tile_m.index[:, None]"}


def _reduce_call(r: Reduce, value: str, dim: int, keepdim: bool) -> str:
    keep = ", keepdim=True" if keepdim else ""
    if r.op == "var":
        return f"torch.var({value}, dim={dim}, correction={r.correction}{keep})"
    return f"torch.{r.op}({value}, dim={dim}{keep})"


def _slice_reduce(p: Program, f: SliceReduce) -> tuple[list[str], list[str], list[str]]:
    m, n = p.dims
    r = f.reduce
    if f.axis == -1:
        loop, win = f"for tile_m in hl.tile({m}):", _Window(p, "[tile_m, :]", "", "tile_m", _MASKS2)
        shape, at = ((m, 1), "[tile_m, :]") if r.keepdim else ((m,), "[tile_m]")
        back, center_at = ("red" if r.keepdim else "red[:, None]"), "[tile_m, :]"
    else:
        loop, win = (
            f"for tile_n in hl.tile({n}):",
            _Window(p, "[:, tile_n]", "[tile_n][None, :]", "", _MASKS2),
        )
        shape, at = ((1, n), "[:, tile_n]") if r.keepdim else ((n,), "[tile_n]")
        back, center_at = ("red" if r.keepdim else "red[None, :]"), "[:, tile_n]"
    outs = [_out("out0", shape, r.dtype)]
    body = [f"red = {_reduce_call(r, win.expr(r.expr), f.axis, r.keepdim)}"]
    body.append(f"out0{at} = {_store('red', r.dtype)}")
    if f.center is not None:
        outs.append(_out("out1", p.dims, f.center.dtype))
        value = f"{win.expr(f.center.expr)} - {back}"
        body.append(f"out1{center_at} = {_store(value, f.center.dtype)}")
    return outs, [loop], body


def _loop_reduce(p: Program, f: LoopReduce) -> tuple[list[str], list[str], list[str]]:
    m, n = p.dims
    r = f.reduce
    grid, inner, extent = ("tile_m", "tile_n", n) if f.axis == -1 else ("tile_n", "tile_m", m)
    win = _Window(p, "[tile_m, tile_n]", "[tile_n][None, :]", "tile_m", _MASKS2)
    outer = f"for {grid} in hl.tile({m if f.axis == -1 else n}):"
    value = win.expr(r.expr)
    dim = f.axis
    lines: list[str] = []
    if r.op in ("argmax", "argmin"):
        better, init, pick = (
            (">", '-float("inf")', "maximum")
            if r.op == "argmax"
            else ("<", 'float("inf")', "minimum")
        )
        red = "amax" if r.op == "argmax" else "amin"
        lines += [
            f"best = hl.full([{grid}], {init}, dtype=torch.float32)",
            f"best_at = hl.zeros([{grid}], dtype=torch.int64)",
            f"for {inner} in hl.tile({extent}):",
            f"    block = {value}",
            f"    peak = torch.{red}(block, dim={dim})",
            f"    at = torch.{r.op}(block, dim={dim}) + {inner}.begin",
            f"    best_at = torch.where(peak {better} best, at, best_at)",
            f"    best = torch.{pick}(best, peak)",
            f"out0[{grid}] = best_at",
        ]
    else:
        init = {
            "amax": 'hl.full([{}], float("-inf"), dtype=torch.float32)',
            "amin": 'hl.full([{}], float("inf"), dtype=torch.float32)',
        }
        start = init.get(r.op, "hl.zeros([{}], dtype=torch.float32)").format(grid)
        fold = {
            "amax": "torch.maximum(acc, torch.amax({}, dim={}))",
            "amin": "torch.minimum(acc, torch.amin({}, dim={}))",
        }
        step = fold.get(r.op, "acc + torch.sum({}, dim={})").format(value, dim)
        result = f"acc * {1.0 / extent!r}" if r.op == "mean" else "acc"
        lines += [
            f"acc = {start}",
            f"for {inner} in hl.tile({extent}):",
            f"    acc = {step}",
            f"out0[{grid}] = {_store(result, r.dtype)}",
        ]
    outs = [_out("out0", (m,) if f.axis == -1 else (n,), r.dtype)]
    return outs, [outer], lines


def _leading(p: Program, f: LeadingReduce) -> tuple[list[str], list[str], list[str]]:
    _, m, n = p.dims
    r = f.reduce
    win = _Window(p, "[:, tile_m, tile_n]", "", "", {})
    shape, at = ((1, m, n), "[:, tile_m, tile_n]") if r.keepdim else ((m, n), "[tile_m, tile_n]")
    body = [f"out0{at} = {_store(_reduce_call(r, win.expr(r.expr), 0, r.keepdim), r.dtype)}"]
    return [_out("out0", shape, r.dtype)], [f"for tile_m, tile_n in hl.tile([{m}, {n}]):"], body


def _matmul(p: Program, f: Matmul) -> tuple[list[str], list[str], list[str]]:
    m, n = p.dims
    win = _Window(p, "[tile_m, tile_n]", "[tile_n][None, :]", "tile_m", _MASKS2)
    body = [
        "acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)",
        f"for tile_k in hl.tile({f.k}):",
        "    acc = acc + a[tile_m, tile_k] @ b[tile_k, tile_n]",
        f"out0[tile_m, tile_n] = {_store(win.expr(f.epilogue.expr), f.epilogue.dtype)}",
    ]
    outs = [_out("out0", (m, n), f.epilogue.dtype)]
    return outs, [f"for tile_m, tile_n in hl.tile([{m}, {n}]):"], body


_REFUSED = {
    "cumsum": "torch.cumsum(x0[tile_m, tile_n], dim=-1)",
    "erf": "torch.erf(x0[tile_m, tile_n])",
    "pow_other": "torch.abs(x0[tile_m, tile_n]) ** 2.5",
    "misaligned_shape": "x0[tile_m, tile_n] + 1.0",
}


def _refused(p: Program, f: Refused) -> tuple[list[str], list[str], list[str]]:
    m, n = p.dims
    loop = f"for tile_m, tile_n in hl.tile([{m}, {n}]):"
    if f.construct == "argmax_grid_tiled":
        body = ["out0[tile_m] = torch.argmax(x0[tile_m, tile_n], dim=-1)"]
        return [_out("out0", (m,), "int64")], [loop], body
    return (
        [_out("out0", (m, n), "fp32")],
        [loop],
        [f"out0[tile_m, tile_n] = {_REFUSED[f.construct]}"],
    )


def _family(p: Program, f: Family) -> tuple[list[str], list[str], list[str]]:
    match f:
        case Pointwise():
            return _pointwise(p, f)
        case SliceReduce():
            return _slice_reduce(p, f)
        case LoopReduce():
            return _loop_reduce(p, f)
        case LeadingReduce():
            return _leading(p, f)
        case Matmul():
            return _matmul(p, f)
        case Refused():
            return _refused(p, f)
    raise TypeError(f)


def _params(p: Program) -> list[str]:
    params = [f"x{i}: torch.Tensor" for i, s in enumerate(p.leaves) if s.kind != "acc"]
    if isinstance(p.family, Matmul):
        params = ["a: torch.Tensor", "b: torch.Tensor", *params]
    return params + [f"s{i}: float" for i in range(len(p.scalars))]


def _inputs(p: Program) -> list[str]:
    lines = [f"    gen = torch.Generator().manual_seed({p.seed})"]
    values: list[str] = []
    if isinstance(p.family, Matmul):
        m, n = p.dims
        k, f = p.family.k, p.family
        lines.append(f"    a = torch.randn({m}, {k}, generator=gen).to({TORCH_DTYPE[f.a_dtype]})")
        lines.append(f"    b = torch.randn({k}, {n}, generator=gen).to({TORCH_DTYPE[f.b_dtype]})")
        values += ["a", "b"]
    for i, spec in enumerate(p.leaves):
        if spec.kind == "acc":
            continue
        shape = ", ".join(str(d) for d in leaf_shape(p, i))
        lines.append(
            f"    x{i} = torch.randn({shape}, generator=gen).to({TORCH_DTYPE[spec.dtype]})"
        )
        values.append(f"x{i}")
    values += [repr(v) for v in p.scalars]
    lines.append(f"    return ({', '.join(values)},)")
    return lines


def render(program: Program) -> str:
    """The Helion file of `program` (deterministic: the same value gives the same text)."""
    name = kernel_name(program)
    outs, loops, body = _family(program, program.family)
    if not any(s.kind != "acc" for s in program.leaves):
        raise ValueError("a program reads at least one tensor leaf (x0)")
    n_out = len(outs)
    device = "a" if isinstance(program.family, Matmul) else "x0"
    outs = [line.replace("DEVICE", device) for line in outs]
    returns = ", ".join(f"out{i}" for i in range(n_out))
    lines = [
        f'"""Fuzzed program {name} (tests/fuzz); verify with `loom verify THIS_FILE`."""',
        "",
        "import helion",
        "import helion.language as hl",
        "import torch",
        "",
        f"FUZZ_PROGRAM = {repr(program)!r}  # noqa: E501",
        "",
        "",
        "@helion.kernel(static_shapes=True)",
        f"def {name}({', '.join(_params(program))}):",
        *outs,
        *(f"    {line}" for line in loops),
        *(f"        {line}" for line in body),
        f"    return {returns}",
        "",
        "",
        "def make_inputs():",
        *_inputs(program),
        "",
    ]
    return "\n".join(lines)
