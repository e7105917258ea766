"""CUDA source -> CudaProgram: pycparser's AST read into the affine subset.

Each thread's writes are gathered symbolically: a compound assignment reads the pending
value of its element, a `for` loop of `+=` becomes a `Sum`, and `if` conditions become
guards. Linearised indices `A[i*N + j]` are split into (row, col) with the row length
of A's host declaration `float A[R][C]`. Anything else is rejected with file:line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pycparser import c_ast
from pycparser.c_parser import CParser

from loom.cuda.ir import (
    THREAD_X,
    THREAD_Y,
    Affine,
    ArrayDecl,
    Bin,
    Constraint,
    CudaProgram,
    Kernel,
    Launch,
    Load,
    Num,
    Param,
    Sum,
    TimeLoop,
    Update,
    Value,
)
from loom.cuda.source import preprocess
from loom.errors import CudaSubsetError

ELEMENT_TYPES = ("float", "__nv_bfloat16")
OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}


def parse_file(path: str, defines: dict[str, str] | None = None) -> CudaProgram:
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise CudaSubsetError(f"cannot read CUDA source {path!r}: {err.strerror}.") from None
    return parse_source(text, path, defines or {})


def parse_source(text: str, path: str, defines: dict[str, str]) -> CudaProgram:
    c_text, in_force = preprocess(text, path, defines)
    try:
        ast = CParser().parse(c_text, filename=path)
    except Exception as err:  # pycparser raises ParseError with "file:line:col: msg"
        raise CudaSubsetError(
            f"{err}: not C in the CUDA subset Loom reads (kernels, one host function "
            "with launches, #define constants)."
        ) from None
    funcs = [e for e in ast.ext if isinstance(e, c_ast.FuncDef) and _file(e) == path]
    launched = {name for f in funcs for name in _launched(f)}
    hosts = [f for f in funcs if _launched(f)]
    if len(hosts) != 1:
        raise CudaSubsetError(
            f"{path}: found {len(hosts)} host functions with kernel launches; write exactly "
            "one host function that launches the kernels."
        )
    host = hosts[0]
    kernels = tuple(_Kernel(path, f).read() for f in funcs if f.decl.name in launched)
    missing = launched - {k.name for k in kernels}
    if missing:
        raise CudaSubsetError(f"{path}: launched kernel(s) {sorted(missing)} are not defined.")
    arrays, body = _Host(path, host, {k.name: k for k in kernels}).read()
    return CudaProgram(path, kernels, host.decl.name, arrays, body, tuple(sorted(in_force.items())))


def _file(node: c_ast.Node) -> str:
    return str(node.coord.file) if node.coord else ""


def _line(node: c_ast.Node) -> int:
    return int(node.coord.line) if node.coord else 0


def _launched(f: c_ast.FuncDef) -> list[str]:
    names: list[str] = []

    class V(c_ast.NodeVisitor):
        def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
            if isinstance(node.name, c_ast.ID) and node.name.name == "__loom_launch":
                first = node.args.exprs[0] if node.args else None
                if isinstance(first, c_ast.ID):
                    names.append(first.name)
            self.generic_visit(node)

    V().visit(f)
    return names


def _err(path: str, node: c_ast.Node, what: str, fix: str) -> CudaSubsetError:
    return CudaSubsetError(f"{path}:{_line(node)}: {what}; {fix}")


def const_int(path: str, node: c_ast.Node, env: dict[str, Affine]) -> int:
    a = affine(path, node, env)
    if not a.is_const:
        raise _err(
            path,
            node,
            f"`{_src(node)}` is not a compile-time constant",
            "extents, launch sizes and loop bounds must be static (use --define).",
        )
    return a.const


def _src(node: c_ast.Node) -> str:
    from pycparser.c_generator import CGenerator

    return str(CGenerator().visit(node))


def affine(path: str, node: c_ast.Node, env: dict[str, Affine]) -> Affine:
    """An integer affine form of `node`; names resolve through `env`."""
    match node:
        case c_ast.Constant(type="int", value=v):
            return Affine.num(int(v.rstrip("uUlL"), 0))
        case c_ast.ID(name=name) if name in env:
            return env[name]
        case c_ast.StructRef(name=c_ast.ID(name=base), field=c_ast.ID(name=fld)) if (
            f"{base}.{fld}" in env
        ):
            return env[f"{base}.{fld}"]
        case c_ast.UnaryOp(op="-", expr=e):
            return affine(path, e, env).scale(-1)
        case c_ast.UnaryOp(op="+", expr=e):
            return affine(path, e, env)
        case c_ast.BinaryOp(op="+" | "-" as op, left=lhs, right=rhs):
            a, b = affine(path, lhs, env), affine(path, rhs, env)
            return a + b if op == "+" else a - b
        case c_ast.BinaryOp(op="*", left=lhs, right=rhs):
            a, b = affine(path, lhs, env), affine(path, rhs, env)
            if a.is_const:
                return b.scale(a.const)
            if b.is_const:
                return a.scale(b.const)
            raise _err(
                path,
                node,
                f"index `{_src(node)}` multiplies two variables (not affine)",
                "indices must be affine in the thread and loop variables.",
            )
        case c_ast.BinaryOp(op="/" | "%" as op, left=lhs, right=rhs):
            a, b = affine(path, lhs, env), affine(path, rhs, env)
            if a.is_const and b.is_const and b.const != 0:
                return Affine.num(a.const // b.const if op == "/" else a.const % b.const)
            raise _err(
                path,
                node,
                f"`{_src(node)}` divides a variable (not affine)",
                "indices must be affine in the thread and loop variables.",
            )
        case c_ast.ID(name=name):
            raise _err(
                path,
                node,
                f"`{name}` is not a known integer (a constant, thread index or loop variable)",
                "define it with #define or --define.",
            )
        case c_ast.ArrayRef():
            raise _err(
                path,
                node,
                f"index `{_src(node)}` depends on array data (indirect access)",
                "only affine indices are supported.",
            )
    raise _err(
        path,
        node,
        f"`{_src(node)}` is not an affine integer expression",
        "use + - and multiplication by constants only.",
    )


_BUILTINS = {
    "blockDim.x": Affine.num(32),
    "blockDim.y": Affine.num(32),
    "blockIdx.x": Affine.var("block.x"),
    "blockIdx.y": Affine.var("block.y"),
    "threadIdx.x": Affine.var("lane.x"),
    "threadIdx.y": Affine.var("lane.y"),
}


@dataclass
class _Kernel:
    path: str
    f: c_ast.FuncDef
    env: dict[str, Affine] = field(default_factory=dict)
    arrays: list[str] = field(default_factory=list)
    scalars: list[str] = field(default_factory=list)
    pending: dict[tuple[str, Affine, Affine], tuple[Value, tuple[Constraint, ...], int]] = field(
        default_factory=dict
    )

    def read(self) -> Kernel:
        self.env.update(_BUILTINS)
        params = []
        for p in self.f.decl.type.args.params if self.f.decl.type.args else ():
            params.append(p.name)
            if isinstance(p.type, c_ast.PtrDecl):
                if _type_name(p.type.type) not in ELEMENT_TYPES:
                    raise _err(
                        self.path,
                        p,
                        f"array parameter `{p.name}` is not float or __nv_bfloat16",
                        "use float arrays (precision is a compile option).",
                    )
                self.arrays.append(p.name)
            elif _type_name(p.type) in ("int", "float", "double"):
                self.scalars.append(p.name)
                if _type_name(p.type) == "int":
                    self.env[p.name] = Affine.var(p.name)
            else:
                raise _err(
                    self.path,
                    p,
                    f"parameter `{p.name}` has an unsupported type",
                    "use float pointers and int or float scalars.",
                )
        self.block(self.f.body, ())
        updates = tuple(
            Update(a, r, c, v, g, line) for (a, r, c), (v, g, line) in self.pending.items()
        )
        return Kernel(
            self.f.decl.name,
            tuple(self.arrays),
            tuple(self.scalars),
            tuple(params),
            updates,
            _line(self.f),
        )

    def block(self, node: c_ast.Compound, guard: tuple[Constraint, ...]) -> None:
        for item in node.block_items or ():
            guard = self.stmt(item, guard)

    def stmt(self, s: c_ast.Node, guard: tuple[Constraint, ...]) -> tuple[Constraint, ...]:
        """Read one statement; returns the guard of the statements after it."""
        match s:
            case c_ast.Decl(init=init) if _type_name(s.type) == "int" and init is not None:
                self.env[s.name] = _thread_form(self.path, s, affine(self.path, init, self.env))
                return guard
            case c_ast.If(cond=cond, iftrue=c_ast.Return(), iffalse=None):
                negated = _negate(self.path, cond, self.conditions(cond))
                return guard + negated
            case c_ast.If(cond=cond, iftrue=then, iffalse=None):
                inner = guard + self.conditions(cond)
                if isinstance(then, c_ast.Compound):
                    self.block(then, inner)
                else:
                    self.stmt(then, inner)
                return guard
            case c_ast.If():
                raise _err(
                    self.path,
                    s,
                    "`else` branches are not supported",
                    "write each guarded update as its own `if`.",
                )
            case c_ast.Assignment():
                self.assign(s, guard, None)
                return guard
            case c_ast.For():
                self.reduction(s, guard)
                return guard
            case c_ast.Compound():
                self.block(s, guard)
                return guard
            case c_ast.Return():
                raise _err(
                    self.path,
                    s,
                    "an unconditional `return` is not supported",
                    "use `if (cond) return;` or guard the updates.",
                )
            case c_ast.FuncCall():
                raise _err(
                    self.path,
                    s,
                    f"call `{_src(s)}` is outside the subset",
                    "kernels may only read and write global arrays.",
                )
        raise _err(
            self.path,
            s,
            f"statement `{_src(s)}` is outside the affine CUDA subset",
            "use int index declarations, guarded array updates and reduction loops.",
        )

    def conditions(self, cond: c_ast.Node) -> tuple[Constraint, ...]:
        match cond:
            case c_ast.BinaryOp(op="&&", left=a, right=b):
                return self.conditions(a) + self.conditions(b)
            case c_ast.BinaryOp(op="<" | "<=" | ">" | ">=" | "==" as op, left=a, right=b):
                if _has_array(cond):
                    raise _err(
                        self.path,
                        cond,
                        "the condition reads array data (data-dependent control flow)",
                        "guards must be affine in the thread indices and launch parameters.",
                    )
                la, lb = affine(self.path, a, self.env), affine(self.path, b, self.env)
                return (_constraint(op, la, lb),)
        if _has_array(cond):
            raise _err(
                self.path,
                cond,
                "the condition reads array data (data-dependent control flow)",
                "guards must be affine in the thread indices.",
            )
        raise _err(
            self.path,
            cond,
            f"condition `{_src(cond)}` is not a conjunction of affine comparisons",
            "use `&&` of <, <=, >, >=, == between affine expressions.",
        )

    def access(self, node: c_ast.ArrayRef) -> tuple[str, Affine, Affine]:
        if not isinstance(node.name, c_ast.ID) or node.name.name not in self.arrays:
            raise _err(
                self.path,
                node,
                f"`{_src(node)}` does not index an array parameter with one linearised subscript",
                "write A[row * COLS + col].",
            )
        return node.name.name, Affine(), affine(self.path, node.subscript, self.env)

    def value(self, node: c_ast.Node) -> Value:
        match node:
            case c_ast.Constant(type="float" | "double" | "int", value=v):
                return Num(float(v.rstrip("fFlL")) if not v.isdigit() else float(int(v)))
            case c_ast.ID(name=name) if name in self.scalars:
                return Param(name)
            case c_ast.ArrayRef():
                name, _, flat = self.access(node)
                key = (name, Affine(), flat)
                if key in self.pending:
                    return self.pending[key][0]
                return Load(name, Affine(), flat)
            case c_ast.BinaryOp(op=op, left=a, right=b) if op in OPS:
                return Bin(OPS[op], self.value(a), self.value(b))
            case c_ast.UnaryOp(op="-", expr=e):
                return Bin("sub", Num(0.0), self.value(e))
            case c_ast.Cast(expr=e):
                return self.value(e)
        raise _err(
            self.path,
            node,
            f"value `{_src(node)}` is outside the subset",
            "use + - * / of array elements, float literals and scalar parameters.",
        )

    def assign(
        self, s: c_ast.Assignment, guard: tuple[Constraint, ...], reduce: tuple[str, int] | None
    ) -> None:
        if not isinstance(s.lvalue, c_ast.ArrayRef):
            raise _err(
                self.path,
                s,
                f"assignment to `{_src(s.lvalue)}`",
                "kernels may only assign array elements (and declare int indices).",
            )
        key = self.access(s.lvalue)
        rhs = self.value(s.rvalue)
        if reduce is not None:
            if s.op != "+=":
                raise _err(
                    self.path,
                    s,
                    "a loop inside a kernel must accumulate with `+=`",
                    "write the reduction as `X[...] += expr;`.",
                )
            var, extent = reduce
            if var in key[2].names:
                raise _err(
                    self.path,
                    s,
                    "the reduction's target depends on its loop variable",
                    "accumulate into one element per thread.",
                )
            rhs = Sum(var, extent, rhs)
        old = self.pending[key][0] if key in self.pending else Load(*key)
        if s.op != "=":
            op = OPS.get(s.op[:-1])
            if op is None or len(s.op) != 2:
                raise _err(
                    self.path, s, f"operator `{s.op}` is not supported", "use = += -= *= /=."
                )
            rhs = Bin("add", old, rhs) if reduce is not None else Bin(op, old, rhs)
        prev = self.pending.get(key)
        if prev is not None and prev[1] != guard:
            raise _err(
                self.path,
                s,
                "an element is written under two different guards",
                "write each element under one guard.",
            )
        self.pending[key] = (rhs, guard, _line(s))

    def reduction(self, s: c_ast.For, guard: tuple[Constraint, ...]) -> None:
        init = s.init.decls[0] if isinstance(s.init, c_ast.DeclList) else None
        cond, step = s.cond, s.next
        ok = (
            init is not None
            and init.init is not None
            and isinstance(cond, c_ast.BinaryOp)
            and cond.op == "<"
            and isinstance(cond.left, c_ast.ID)
            and cond.left.name == init.name
            and isinstance(step, c_ast.UnaryOp)
            and step.op in ("p++", "++")
        )
        if not ok or init is None or not isinstance(cond, c_ast.BinaryOp):
            raise _err(
                self.path,
                s,
                "a loop in a kernel must read `for (int k = 0; k < K; k++)`",
                "write reductions in that form.",
            )
        lo = const_int(self.path, init.init, self.env)
        hi = const_int(self.path, cond.right, self.env)
        if lo != 0:
            raise _err(self.path, s, "a reduction loop must start at 0", "shift the index.")
        self.env[init.name] = Affine.var(init.name)
        body = s.stmt.block_items if isinstance(s.stmt, c_ast.Compound) else [s.stmt]
        if not body or len(body) != 1 or not isinstance(body[0], c_ast.Assignment):
            raise _err(
                self.path,
                s,
                "a reduction loop must contain exactly one `+=` update",
                "split other work out of the loop.",
            )
        self.assign(body[0], guard, (init.name, hi))
        del self.env[init.name]


def _thread_form(path: str, node: c_ast.Node, a: Affine) -> Affine:
    """Fold 32*block.d + lane.d into the global thread index thread.d (y rows, x cols);
    a lone block or lane index would tie the program to the block decomposition."""
    out = a
    for d, name in (("y", THREAD_Y), ("x", THREAD_X)):
        b, lane = a.coef(f"block.{d}"), a.coef(f"lane.{d}")
        if b != 32 * lane:
            raise _err(
                path,
                node,
                f"index `{_src(node)}` uses blockIdx.{d} and threadIdx.{d} "
                "other than as blockIdx*blockDim + threadIdx",
                "compute the global index `blockIdx.y * blockDim.y + threadIdx.y`.",
            )
        out = out.without(f"block.{d}").without(f"lane.{d}") + Affine.var(name).scale(lane)
    return out


def _type_name(t: c_ast.Node) -> str:
    while isinstance(t, c_ast.TypeDecl):
        t = t.type
    if isinstance(t, c_ast.IdentifierType):
        return " ".join(t.names)
    return ""


def _has_array(node: c_ast.Node) -> bool:
    found = False

    class V(c_ast.NodeVisitor):
        def visit_ArrayRef(self, n: c_ast.ArrayRef) -> None:
            nonlocal found
            found = True

    V().visit(node)
    return found


def _constraint(op: str, a: Affine, b: Affine) -> Constraint:
    d = a - b
    match op:
        case ">=":
            return Constraint(d, "ge")
        case ">":
            return Constraint(d - Affine.num(1), "ge")
        case "<=":
            return Constraint(d.scale(-1), "ge")
        case "<":
            return Constraint(d.scale(-1) - Affine.num(1), "ge")
    return Constraint(d, "eq")


def _negate(path: str, node: c_ast.Node, cs: tuple[Constraint, ...]) -> tuple[Constraint, ...]:
    if len(cs) != 1 or cs[0].op != "ge":
        raise _err(
            path,
            node,
            "`if (cond) return;` needs a single inequality",
            "guard the updates with `if (...) { ... }` instead.",
        )
    return (Constraint(cs[0].expr.scale(-1) - Affine.num(1), "ge"),)


@dataclass
class _Host:
    path: str
    f: c_ast.FuncDef
    kernels: dict[str, Kernel]
    arrays: list[ArrayDecl] = field(default_factory=list)

    def read(self) -> tuple[tuple[ArrayDecl, ...], tuple[Launch | TimeLoop, ...]]:
        for p in self.f.decl.type.args.params if self.f.decl.type.args else ():
            t = p.type
            if not (isinstance(t, c_ast.ArrayDecl) and isinstance(t.type, c_ast.ArrayDecl)):
                raise _err(
                    self.path,
                    p,
                    f"host parameter `{p.name}` is not a rank-2 array",
                    "declare host arrays as `float A[ROWS][COLS]`.",
                )
            rows = const_int(self.path, t.dim, {})
            cols = const_int(self.path, t.type.dim, {})
            if _type_name(t.type.type) not in ELEMENT_TYPES:
                raise _err(
                    self.path,
                    p,
                    f"host array `{p.name}` is not float",
                    "use float arrays (precision is a compile option).",
                )
            if rows <= 0 or cols <= 0 or rows % 32 or cols % 32:
                raise _err(
                    self.path,
                    p,
                    f"array `{p.name}` is {rows}x{cols}; extents must be positive multiples of 32",
                    "choose sizes divisible by the tile.",
                )
            self.arrays.append(ArrayDecl(p.name, rows, cols))
        body: list[Launch | TimeLoop] = []
        for s in self.f.body.block_items or ():
            body.append(self.item(s))
        return tuple(self.arrays), tuple(body)

    def item(self, s: c_ast.Node) -> Launch | TimeLoop:
        if isinstance(s, c_ast.FuncCall):
            return self.launch(s, {})
        if isinstance(s, c_ast.For):
            init = s.init.decls[0] if isinstance(s.init, c_ast.DeclList) else None
            cond = s.cond
            if (
                init is None
                or init.init is None
                or not isinstance(cond, c_ast.BinaryOp)
                or cond.op != "<"
                or not isinstance(s.next, c_ast.UnaryOp)
                or s.next.op not in ("p++", "++")
            ):
                raise _err(
                    self.path,
                    s,
                    "the host loop must read `for (int t = lo; t < hi; t++)`",
                    "write the time loop in that form.",
                )
            lo = const_int(self.path, init.init, {})
            hi = const_int(self.path, cond.right, {})
            env = {init.name: Affine.var(init.name)}
            stmts = s.stmt.block_items if isinstance(s.stmt, c_ast.Compound) else [s.stmt]
            launches = []
            for x in stmts or ():
                if not isinstance(x, c_ast.FuncCall):
                    raise _err(
                        self.path,
                        x,
                        "the host loop may only launch kernels",
                        "move other host work out of the loop.",
                    )
                launches.append(self.launch(x, env))
            return TimeLoop(init.name, lo, hi, tuple(launches), _line(s))
        raise _err(
            self.path,
            s,
            f"host statement `{_src(s)}` is not a launch or a time loop",
            "the host function may only launch kernels, optionally in one loop.",
        )

    def launch(self, call: c_ast.FuncCall, env: dict[str, Affine]) -> Launch:
        if not (isinstance(call.name, c_ast.ID) and call.name.name == "__loom_launch"):
            raise _err(
                self.path,
                call,
                f"host call `{_src(call)}` is not a kernel launch",
                "launch kernels with <<<grid, block>>>.",
            )
        exprs = call.args.exprs
        name = exprs[0].name
        grid, block = self.dims(exprs[1]), self.dims(exprs[2])
        if block != (32, 32):
            raise _err(
                self.path,
                call,
                f"kernel `{name}` is launched with {block[0]}x{block[1]} thread blocks",
                "use 32x32 thread blocks: dim3(32, 32).",
            )
        kernel = self.kernels[name]
        args = exprs[3:]
        if len(args) != len(kernel.params):
            raise _err(
                self.path,
                call,
                f"kernel `{name}` takes {len(kernel.params)} arguments, "
                f"the launch passes {len(args)}",
                "pass one argument per parameter.",
            )
        values: list[str | float | Affine] = []
        names = {a.name for a in self.arrays}
        for param, a in zip(kernel.params, args, strict=True):
            if param in kernel.arrays:
                if not (isinstance(a, c_ast.ID) and a.name in names):
                    raise _err(
                        self.path,
                        a,
                        f"argument `{_src(a)}` for array `{param}` is not a host array",
                        "pass a host array parameter.",
                    )
                values.append(a.name)
            elif isinstance(a, c_ast.Constant) and a.type in ("float", "double"):
                values.append(float(a.value.rstrip("fFlL")))
            else:
                values.append(affine(self.path, a, env))
        return Launch(name, grid, block, tuple(values), _line(call))

    def dims(self, node: c_ast.Node) -> tuple[int, int]:
        if (
            isinstance(node, c_ast.FuncCall)
            and isinstance(node.name, c_ast.ID)
            and node.name.name == "dim3"
            and node.args
            and len(node.args.exprs) == 2
        ):
            x = const_int(self.path, node.args.exprs[0], {})
            y = const_int(self.path, node.args.exprs[1], {})
            return (y, x)
        raise _err(
            self.path,
            node,
            "launch sizes must be written `dim3(x, y)`",
            "use two-dimensional dim3 grids and blocks.",
        )
