"""The looped realization of a full-extent dim: `x[tile_m, :]` streamed in chunks.

A row kernel written in Helion's persistent idiom (`x[tile_m, :]`, reductions over the
row, a store of the whole row) keeps the row and each of its intermediates in L1. When
that does not fit, or streaming is faster, the same program can run as inner loops over
the row in chunks of a symbolic size (`tile_<tensor>_d<axis>`, named after the tensor
whose full slice sets the dim; the solver picks it like any tile):

* one statistics pass per reduction dependency level: each pass re-loads the row's
  chunks and recomputes their producers (loads, elementwise ops, conversions,
  broadcasts), folding each reduction into a carried accumulator (`add`, `maximum`);
  what the reductions feed (a mean, an inverse RMS) is computed between the passes;
* a final pass that recomputes the row-wide values and stores them chunk by chunk;
* the online form of max-then-sum-of-exp (softmax, log-sum-exp): the sum of
  `exp(a - max)` joins the max's pass as a running sum rescaled by
  `exp(old_max - new_max)` whenever the running max grows, so that pattern costs one
  pass less;
* the one-pass variance: `sum((a - k * sum(a))**2)` (a variance about the row's mean,
  `torch.var`, `var_mean`, a LayerNorm written out) joins the pass of `sum(a)` as the
  sum of squares, `sum(a**2) - (2k - n k**2) * sum(a)**2` after it (fp32 accumulators,
  as TTNN's layernorm computes E[x**2] - E[x]**2), so LayerNorm reads its row twice
  (statistics, then output) rather than three times.

The frontend keeps the program as written; the Helion flow compiles both realizations
and keeps the one the model finds faster (`loom.flows.helion`). Nothing here reads the
architecture.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from loom.ir.geometry import TILE
from loom.ir.tile import (
    REDUCE_COMBINE,
    Carried,
    Convert,
    Elementwise,
    ExpandDims,
    ForLoop,
    Full,
    Load,
    Op,
    Reduce,
    Store,
    TileProgram,
    Value,
    Window,
    reduce_identity,
    walk,
)
from loom.symbolic import Const, Expr, Sym

_ROW_OPS = (Load, Elementwise, Convert, ExpandDims, Full)


@dataclass(frozen=True)
class LoopedRows:
    """A program's looped realization and what it is, in source terms."""

    program: TileProgram
    tile: Sym
    """The chunk size symbol, e.g. `tile_x_d1`."""
    tensor: str
    line: int
    extent: int
    passes: int
    """Statistics passes (loops with reductions)."""
    online: tuple[str, ...]
    """The sums of exp folded into their max's pass (online softmax form)."""
    online_lines: tuple[int, ...] = ()
    """Their source lines."""
    squares: tuple[str, ...] = ()
    """The variances folded into their mean's pass (sum of squares, one-pass form)."""

    def describe(self, chunk: int | None = None) -> str:
        """One sentence for reports: which dim, in chunks of which symbol, how many passes."""
        size = f"{self.tile.name} = {chunk}" if chunk is not None else self.tile.name
        where = f" (line {self.line})" if self.line else ""
        final = " + 1 store pass" if _has_row_store(self.program) else ""
        lines = ", ".join(f"line {n}" for n in self.online_lines)
        online = f", the sum of exp ({lines}) online with its max" if self.online else ""
        squares = ", the variance as a sum of squares with its mean" if self.squares else ""
        return (
            f"looped: the full {self.extent} of {self.tensor}'s last dim{where} in chunks "
            f"of {size}, {self.passes} statistics pass(es){final}{online}{squares}"
        )


def loop_rows(program: TileProgram) -> LoopedRows | None:
    """`program` with its full-extent reduction dim run as inner loops over chunks, or
    None when it has none or the body holds something this rewrite does not handle
    (nested loops, guards, matmuls, gathers, reductions over another axis)."""
    ops = program.body
    if program.after is not None or not all(
        isinstance(op, (*_ROW_OPS, Reduce, Store)) for op in ops
    ):
        return None
    n = _row_extent(ops)
    if n is None:
        return None
    ops = _merge_equal_reductions(ops)
    rows = _Rows(ops, n)
    if not rows.valid():
        return None
    first = next(op for op in ops if isinstance(op, Load) and rows.wide(op.result))
    tile = _chunk_symbol(program, first.tensor, len(first.window) - 1, n)
    body = _Builder(program, rows, tile).build()
    looped = dataclasses.replace(program, body=body)
    return LoopedRows(
        looped,
        tile,
        first.tensor,
        first.line,
        n,
        rows.passes,
        tuple(rows.online),
        tuple(getattr(rows.producer[name], "line", 0) for name in rows.online),
        tuple(rows.squares),
    )


def _row_extent(ops: tuple[Op, ...]) -> int | None:
    """The common extent of every reduction's axis (the operand's last, of a rank-2
    tile), when it spans at least two tiles; None otherwise."""
    extents = set()
    for op in ops:
        if isinstance(op, Reduce):
            last = op.operand.shape[-1]
            if op.operand.rank != 2 or op.axis != 1 or not isinstance(last, Const):
                return None
            extents.add(last.value)
    if len(extents) != 1:
        return None
    (n,) = extents
    return n if n % TILE == 0 and n >= 2 * TILE else None


def _merge_equal_reductions(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    """Drop a reduction equal to an earlier one (`var_mean` sums the row twice), its
    readers reading the first: each would otherwise cost its pass a second reduce."""
    first: dict[tuple[str, str, int], Value] = {}
    alias: dict[str, Value] = {}
    out: list[Op] = []
    for op in ops:
        op = _substitute(op, alias.get)
        if isinstance(op, Reduce):
            key = (op.op, op.operand.name, op.axis)
            if key in first:
                alias[op.result.name] = first[key]
                continue
            first[key] = op.result
        out.append(op)
    return tuple(out)


class _Rows:
    """Which values span the row (last dim the full extent), and the pass of each."""

    def __init__(self, ops: tuple[Op, ...], n: int) -> None:
        self.ops = ops
        self.n = Const(n)
        self.producer = {r.name: op for op in ops for r in op.results()}
        self.level: dict[str, int] = {}
        self.online: dict[str, tuple[Reduce, Elementwise, Elementwise, Value]] = {}
        """A sum's name -> (its max, the sub, the exp, the sub's row operand)."""
        self.squares: dict[str, tuple[Reduce, Value, float]] = {}
        """A centred sum of squares' name -> (the row's sum, the row, 2k - n k**2)."""
        for op in ops:
            for r in op.results():
                self.level[r.name] = self._level(op)
        self.passes = max((self.level[op.result.name] for op in self._reduces()), default=0)

    def wide(self, v: Value) -> bool:
        return bool(v.shape) and v.shape[-1] == self.n

    def _reduces(self) -> list[Reduce]:
        return [op for op in self.ops if isinstance(op, Reduce)]

    def _level(self, op: Op) -> int:
        ins = max((self.level.get(v.name, 0) for v in op.operands()), default=0)
        if not isinstance(op, Reduce):
            return ins
        online = self._online_parts(op)
        if online is not None:
            self.online[op.result.name] = online
            return self.level[online[0].result.name]
        square = self._square_parts(op)
        if square is not None:
            self.squares[op.result.name] = square
            return self.level[square[0].result.name]
        return ins + 1

    def _square_parts(self, op: Reduce) -> tuple[Reduce, Value, float] | None:
        """`sum((a - k * sum(a))**2)`: the row's sum `s`, `a` and 2k - n k**2, so that
        the reduction is `sum(a**2) - (2k - n k**2) * s**2`, one pass with `s`'s."""
        sq = self.producer.get(op.operand.name)
        if not (isinstance(sq, Elementwise) and sq.op == "mul" and len(sq.args) == 2):
            return None
        c, c2 = sq.args
        if not (isinstance(c, Value) and isinstance(c2, Value) and c.name == c2.name):
            return None
        sub = self.producer.get(c.name)
        if not (isinstance(sub, Elementwise) and sub.op == "sub" and len(sub.args) == 2):
            return None
        a, m = sub.args
        if not (isinstance(a, Value) and isinstance(m, Value) and self.wide(a)):
            return None
        if self.wide(m):
            return None
        k, top = self._scaled_sum(m)
        if not (
            isinstance(top, Reduce)
            and top.op == "sum"
            and top.axis == 1
            and top.operand.name == a.name
            and top.result.name in self.level
            and top.result.name not in self.online
        ):
            return None
        return top, a, 2 * k - self.n.value * k * k

    def _scaled_sum(self, m: Value) -> tuple[float, Op | None]:
        """`m` as k times a reduction's result, through column views and scalings."""
        k = 1.0
        op = self.producer.get(m.name)
        while True:
            if isinstance(op, ExpandDims) and op.axis == 1:
                op = self.producer.get(op.operand.name)
            elif isinstance(op, Elementwise) and op.op == "mul" and len(op.args) == 2:
                x, y = op.args
                if isinstance(x, Value) and isinstance(y, float | int):
                    k, op = k * float(y), self.producer.get(x.name)
                elif isinstance(y, Value) and isinstance(x, float | int):
                    k, op = k * float(x), self.producer.get(y.name)
                else:
                    return k, None
            else:
                return k, op

    def _online_parts(self, op: Reduce) -> tuple[Reduce, Elementwise, Elementwise, Value] | None:
        """`sum(exp(a - max_r[:, None]))` with `a` computable before the max's pass."""
        if op.op != "sum":
            return None
        exp = self.producer.get(op.operand.name)
        if not (isinstance(exp, Elementwise) and exp.op == "exp" and len(exp.args) == 1):
            return None
        arg = exp.args[0]
        sub = self.producer.get(arg.name) if isinstance(arg, Value) else None
        if not (isinstance(sub, Elementwise) and sub.op == "sub" and len(sub.args) == 2):
            return None
        a, b = sub.args
        if not (isinstance(a, Value) and isinstance(b, Value) and self.wide(a)):
            return None
        view = self.producer.get(b.name)
        if not (isinstance(view, ExpandDims) and view.axis == 1):
            return None
        top = self.producer.get(view.operand.name)
        if not (isinstance(top, Reduce) and top.op == "max"):
            return None
        if self.level[a.name] >= self.level[top.result.name]:
            return None
        return top, sub, exp, a

    def valid(self) -> bool:
        """Every row-wide value comes from an op a chunk can recompute, loads and stores
        span the full row, and only reductions turn a row into a column."""
        full = Window(Const(0), self.n)
        stored = [op.tensor for op in self.ops if isinstance(op, Store)]
        loaded = {op.tensor for op in self.ops if isinstance(op, Load)}
        if len(set(stored)) < len(stored) or loaded & set(stored):
            return False  # the passes would reorder a store with another access to it
        for op in self.ops:
            results = op.results()
            if isinstance(op, Store):
                if self.wide(op.value) and op.window[-1] != full:
                    return False
                continue
            if isinstance(op, Reduce):
                continue
            row_in = any(self.wide(v) for v in op.operands())
            row_out = self.wide(results[0])
            if row_in and not row_out:
                return False
            if row_out and results[0].rank > 2:
                return False
            if isinstance(op, Load) and row_out and op.window[-1] != full:
                return False
            if isinstance(op, ExpandDims) and row_out and op.axis >= op.operand.rank:
                return False
        return self.passes > 0


def _substitute(op: Op, new: Callable[[str], Value | None]) -> Op:
    """`op` reading `new(name)` instead of each operand `new` knows."""

    def v(x: Value) -> Value:
        return new(x.name) or x

    match op:
        case Elementwise(args=args):
            return dataclasses.replace(
                op, args=tuple(v(a) if isinstance(a, Value) else a for a in args)
            )
        case Convert(operand=x) | ExpandDims(operand=x) | Reduce(operand=x):
            return dataclasses.replace(op, operand=v(x))
        case Store(value=x):
            return dataclasses.replace(op, value=v(x))
    return op


def _chunk_symbol(program: TileProgram, tensor: str, axis: int, n: int) -> Sym:
    """`tile_<tensor>_d<axis>`, as the frontend names the loop of a leading-axis
    reduction after what it reduces (a suffix if the kernel already has that name)."""
    taken = {s.name for s in program.tile_syms}
    name = f"tile_{tensor}_d{axis}"
    suffix = 1
    while name in taken:
        suffix += 1
        name = f"tile_{tensor}_d{axis}_{suffix}"
    return Sym(name, TILE, n, TILE, "tile")


class _Builder:
    """Writes the passes: column ops at the top level, row ops recomputed per chunk."""

    def __init__(self, program: TileProgram, rows: _Rows, tile: Sym) -> None:
        self.rows = rows
        self.tile = tile
        self.index = Sym(f"{tile.name}_id", 0, max(rows.n.value - 1, 0), 1, "index")
        self.sums: dict[str, Value] = {}
        """A centred sum of squares' name -> its pass's `sum(a**2)`."""
        self.names = {v.name for op in walk(program.body) for v in (*op.results(), *op.operands())}

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def value(self, like: Value, base: str, shape: tuple[Expr, ...] | None = None) -> Value:
        return Value(self.fresh(base), like.shape if shape is None else shape, like.dtype)

    def build(self) -> tuple[Op, ...]:
        rows = self.rows
        out: list[Op] = []
        columns = [
            op
            for op in rows.ops
            if not self._is_row(op)
            and (not isinstance(op, Reduce) or op.result.name in rows.squares)
        ]
        out += [op for op in columns if self._column_level(op) == 0]
        for p in range(1, rows.passes + 1):
            out += self._pass(p)
            for op in columns:
                if self._column_level(op) == p:
                    out += self._centred(op) if isinstance(op, Reduce) else [op]
        stores = [op for op in rows.ops if isinstance(op, Store) and rows.wide(op.value)]
        if stores:
            chunk: dict[str, Value] = {}
            body = self._recompute([s.value for s in stores], chunk)
            body += [self._chunk_store(s, chunk) for s in stores]
            out.append(self._loop(tuple(body), ()))
        return _drop_unread(tuple(out))

    def _is_row(self, op: Op) -> bool:
        if isinstance(op, Store):
            return self.rows.wide(op.value)
        return bool(op.results()) and self.rows.wide(op.results()[0])

    def _column_level(self, op: Op) -> int:
        if isinstance(op, Store):
            return self.rows.level.get(op.value.name, 0)
        return self.rows.level[op.results()[0].name]

    def _loop(self, body: tuple[Op, ...], carried: tuple[Carried, ...]) -> ForLoop:
        line = next((getattr(op, "line", 0) for op in body if getattr(op, "line", 0)), 0)
        return ForLoop(self.tile, self.index, Const(0), self.rows.n, body, carried, line)

    def _pass(self, p: int) -> list[Op]:
        """The accumulators' fills and the loop of statistics pass `p`."""
        rows = self.rows
        reduces = [
            op
            for op in rows.ops
            if isinstance(op, Reduce)
            and rows.level[op.result.name] == p
            and op.result.name not in rows.online
        ]
        chunk: dict[str, Value] = {}
        body: list[Op] = []
        carried: list[Carried] = []
        fills: list[Op] = []
        for red in reduces:
            if red.result.name in rows.squares:
                red, part_of = self._square(red, chunk, body)
            else:
                body += self._recompute([red.operand], chunk)
                part_of = chunk[red.operand.name]
            nxt, c, fill = self._fold(red, part_of, body)
            carried.append(c)
            fills.append(fill)
            for name, (top, sub, exp, a) in rows.online.items():
                if top is red:
                    s = next(op for op in rows.ops if op.results()[0].name == name)
                    assert isinstance(s, Reduce)
                    body += self._recompute([a], chunk)
                    c2, fill2 = self._online(s, sub, exp, chunk[a.name], c, nxt, body)
                    carried.append(c2)
                    fills.append(fill2)
        return [*fills, self._loop(tuple(body), tuple(carried))]

    def _square(self, red: Reduce, chunk: dict[str, Value], body: list[Op]) -> tuple[Reduce, Value]:
        """The sum of squares of the row a centred sum of squares reads, on one chunk:
        the reduction to fold (its result `sum(a**2)`) and the chunk's squares."""
        _, a, _ = self.rows.squares[red.result.name]
        body += self._recompute([a], chunk)
        x = chunk[a.name]
        sq = self.value(x, f"{a.name}_sq_chunk")
        body.append(Elementwise(sq, "mul", (x, x), red.line))
        total = self.value(red.result, f"{red.result.name}_sq")
        self.sums[red.result.name] = total
        return Reduce(total, "sum", red.operand, red.axis, red.line), sq

    def _centred(self, red: Reduce) -> list[Op]:
        """`sum((a - m)**2) = sum(a**2) - (2k - n k**2) * sum(a)**2` for m = k * sum(a),
        after the pass that summed both."""
        top, _, coef = self.rows.squares[red.result.name]
        r, line = red.result, red.line
        s2, t = self.value(r, f"{r.name}_mean_sq"), self.value(r, f"{r.name}_shift")
        return [
            Elementwise(s2, "mul", (top.result, top.result), line),
            Elementwise(t, "mul", (s2, coef), line),
            Elementwise(r, "sub", (self.sums[r.name], t), line),
        ]

    def _fold(self, red: Reduce, part_of: Value, body: list[Op]) -> tuple[Value, Carried, Full]:
        """`acc = combine(acc, reduce(chunk))` carried across the chunks."""
        r = red.result
        part = self.value(r, f"{r.name}_part")
        body.append(Reduce(part, red.op, part_of, red.axis, red.line))
        init, arg, nxt = (self.value(r, f"{r.name}_{s}") for s in ("init", "acc", "next"))
        body.append(Elementwise(nxt, REDUCE_COMBINE[red.op], (arg, part), red.line))
        fill = reduce_identity(red.op, r.dtype)
        return nxt, Carried(init, arg, nxt, r), Full(init, fill, red.line)

    def _online(
        self,
        s: Reduce,
        sub: Elementwise,
        exp: Elementwise,
        a: Value,
        top: Carried,
        top_next: Value,
        body: list[Op],
    ) -> tuple[Carried, Full]:
        """`sum = sum * exp(max - new_max) + reduce(exp(a - new_max))`, per chunk."""
        r, line = s.result, s.line
        col = top_next
        view = self.value(col, f"{col.name}_col", (*col.shape, Const(1)))
        body.append(ExpandDims(view, col, 1, line))
        shape = a.shape
        d = self.value(sub.result, f"{sub.result.name}_online", shape)
        body.append(Elementwise(d, "sub", (a, view), sub.line))
        e = self.value(exp.result, f"{exp.result.name}_online", shape)
        body.append(Elementwise(e, "exp", (d,), exp.line))
        part = self.value(r, f"{r.name}_part")
        body.append(Reduce(part, "sum", e, 1, line))
        init, arg, nxt = (self.value(r, f"{r.name}_{x}") for x in ("init", "acc", "next"))
        shift = self.value(r, f"{r.name}_shift")
        body.append(Elementwise(shift, "sub", (top.arg, top_next), line))
        scale = self.value(r, f"{r.name}_scale")
        body.append(Elementwise(scale, "exp", (shift,), line))
        kept = self.value(r, f"{r.name}_kept")
        body.append(Elementwise(kept, "mul", (arg, scale), line))
        body.append(Elementwise(nxt, "add", (kept, part), line))
        return Carried(init, arg, nxt, r), Full(init, 0.0, line)

    def _recompute(self, targets: list[Value], chunk: dict[str, Value]) -> list[Op]:
        """The row ops computing `targets` on one chunk, in program order (those this
        chunk already computed are reused)."""
        rows = self.rows
        need: set[str] = set()
        stack = [t.name for t in targets if rows.wide(t)]
        while stack:
            name = stack.pop()
            if name in need or name in chunk:
                continue
            need.add(name)
            stack += [v.name for v in rows.producer[name].operands() if rows.wide(v)]
        out: list[Op] = []
        for op in rows.ops:
            if op.results() and op.results()[0].name in need:
                out.append(self._chunk_op(op, chunk))
        return out

    def _chunk_shape(self, v: Value) -> tuple[Expr, ...]:
        return (*v.shape[:-1], self.tile)

    def _chunk_window(self, window: tuple[Window, ...]) -> tuple[Window, ...]:
        return (*window[:-1], Window(self.index * self.tile, self.tile))

    def _chunk_op(self, op: Op, chunk: dict[str, Value]) -> Op:
        r = op.results()[0]
        new = self.value(r, f"{r.name}_chunk", self._chunk_shape(r))
        chunk[r.name] = new
        op = _substitute(op, chunk.get)
        if isinstance(op, Load):
            return dataclasses.replace(op, result=new, window=self._chunk_window(op.window))
        assert isinstance(op, Elementwise | Convert | ExpandDims | Full)
        return dataclasses.replace(op, result=new)

    def _chunk_store(self, store: Store, chunk: dict[str, Value]) -> Store:
        return dataclasses.replace(
            store, value=chunk[store.value.name], window=self._chunk_window(store.window)
        )


def _drop_unread(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    """Without the top-level views and column values nothing reads any more (a max's
    broadcast that only the online pass's own copy reads)."""
    while True:
        read = {v.name for op in walk(ops) for v in op.operands()}
        read |= {c.next.name for op in walk(ops) if isinstance(op, ForLoop) for c in op.carried}
        kept = tuple(
            op
            for op in ops
            if not isinstance(op, (*_ROW_OPS,)) or any(r.name in read for r in op.results())
        )
        if len(kept) == len(ops):
            return ops
        ops = kept


def _has_row_store(program: TileProgram) -> bool:
    return any(isinstance(op, ForLoop) and not op.carried for op in program.body)
