"""FP64 reference: the parsed CUDA program executed thread by thread (vectorised).

This interprets the parser's output (flat indices, guards in thread coordinates), not
the checkpoints, so it checks TilePlan's re-indexing and everything after it. Every
launch reads the arrays as they were before it (the subset has one written element per
thread and no intra-launch dependence) and writes the active threads' elements.
"""

from __future__ import annotations

import numpy as np

from loom.cuda.ir import THREAD_X, THREAD_Y, Affine, Bin, CudaProgram, Load, Num, Param, Sum, Value


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 (nearest, ties to even), returned as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    bias = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    return ((bits + bias) & np.uint32(0xFFFF0000)).view(np.float32)


def run_reference(
    prog: CudaProgram,
    arrays: dict[str, np.ndarray],
    dtype: type = np.float64,
    storage: str = "",
    unstored: frozenset[str] = frozenset(),
) -> dict[str, np.ndarray]:
    """Execute every launch; with `storage="bf16"` each launch's result is rounded to
    bf16 (arrays stored in bf16 between launches, computed in `dtype` within one), except
    arrays in `unstored` (a fused producer's result, forwarded without being stored)."""
    out: dict[str, np.ndarray] = {k: v.astype(dtype).copy() for k, v in arrays.items()}
    for la, env in prog.launches():
        k = prog.kernel(la.kernel)
        bind = dict(zip(k.params, la.args, strict=True))
        names = {p: str(bind[p]) for p in k.arrays}
        scal: dict[str, float] = {}
        ienv = dict(env)
        for p in k.scalars:
            v = bind[p]
            if isinstance(v, Affine):
                ienv[p] = v.eval(env)
            else:
                scal[p] = float(v)
        ty, tx = np.meshgrid(np.arange(la.grid[0] * 32), np.arange(la.grid[1] * 32), indexing="ij")
        grid = {THREAD_Y: ty, THREAD_X: tx}
        for u in k.updates:
            active = np.ones(ty.shape, dtype=bool)
            for g in u.guard:
                e = _aff(g.expr, grid, ienv)
                active &= (e >= 0) if g.op == "ge" else (e == 0)
            target = out[names[u.array]].reshape(-1)
            idx = _aff(u.col, grid, ienv)
            val = _eval(u.value, grid, ienv, scal, names, out, active, dtype)
            new = target.copy()
            new[idx[active]] = val[active]
            if storage == "bf16" and names[u.array] not in unstored:
                new = round_bf16(new).astype(dtype)
            out[names[u.array]] = new.reshape(out[names[u.array]].shape)
    return out


def _aff(a: Affine, grid: dict[str, np.ndarray], env: dict[str, int]) -> np.ndarray:
    shape = next(iter(grid.values())).shape
    acc = np.full(shape, a.const, dtype=np.int64)
    for n, c in a.terms:
        acc = acc + c * (grid[n] if n in grid else env[n])
    return acc


def _eval(
    v: Value,
    grid: dict[str, np.ndarray],
    env: dict[str, int],
    scal: dict[str, float],
    names: dict[str, str],
    arrays: dict[str, np.ndarray],
    active: np.ndarray,
    dtype: type,
) -> np.ndarray:
    shape = active.shape
    match v:
        case Num(value=x):
            return np.full(shape, x, dtype=dtype)
        case Param(name=n):
            return np.full(shape, scal[n], dtype=dtype)
        case Load(array=a, col=flat):
            data = arrays[names[a]].reshape(-1)
            idx = np.where(active, _aff(flat, grid, env), 0)
            loaded: np.ndarray = data[np.clip(idx, 0, data.size - 1)]
            return loaded
        case Bin(op=op, lhs=x, rhs=y):
            p = _eval(x, grid, env, scal, names, arrays, active, dtype)
            q = _eval(y, grid, env, scal, names, arrays, active, dtype)
            ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
            with np.errstate(divide="ignore", invalid="ignore"):
                combined: np.ndarray = ufunc(p, q)
            return combined
        case Sum(var=var, extent=n, body=b):
            acc: np.ndarray = np.zeros(shape, dtype=dtype)
            for kk in range(n):
                acc += _eval(b, grid, {**env, var: kk}, scal, names, arrays, active, dtype)
            return acc
    raise TypeError(v)
