"""The CUDA path's pipeline: the one module that runs its checkpoints in order and
hands the resulting Programs to tt-lang-sim and to the timing simulator.

    parse -> TilePlan -> TileFlow -> Task -> Physical -> [Program per launch]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from loom.arch import Arch
from loom.cuda import (
    Annotations,
    LaunchProgram,
    Physical,
    TileFlow,
    TilePlan,
    barrier_cycles,
    build_physical,
    build_task,
    build_tileflow,
    build_tileplan,
    format_physical,
    format_task,
    format_tileflow,
    format_tileplan,
    launch_cost,
    lower_launch,
    parse_file,
    run_reference,
)
from loom.cuda.checkpoint import STAGES, Checkpoint, applied_digest, source_digest
from loom.cuda.ir import CudaProgram
from loom.errors import LoomError


@dataclass(frozen=True)
class CudaOptions:
    arch: Arch
    precision: str = "fp32"
    defines: tuple[tuple[str, str], ...] = ()
    annotations: Annotations = field(default_factory=Annotations)
    stop_after: str | None = None


@dataclass(frozen=True)
class CudaCompiled:
    source: CudaProgram
    options: CudaOptions
    texts: tuple[tuple[str, str], ...]
    """(stage, printed checkpoint) in order."""
    physical: Physical | None
    plan: TilePlan | None = None
    flow: TileFlow | None = None


def compile_cuda(path: str, options: CudaOptions) -> CudaCompiled:
    if options.stop_after is not None and options.stop_after not in STAGES:
        raise LoomError(f"--stop-after {options.stop_after!r}: choose one of {', '.join(STAGES)}.")
    if options.precision not in ("bf16", "fp32"):
        raise LoomError(f"precision {options.precision!r}: choose bf16 or fp32.")
    src = parse_file(path, dict(options.defines))
    ann = options.annotations
    texts: list[tuple[str, str]] = []
    plan = build_tileplan(src, ann)
    texts.append(("tileplan", format_tileplan(plan)))
    if options.stop_after == "tileplan":
        return CudaCompiled(src, options, tuple(texts), None, plan)
    flow = build_tileflow(plan, ann)
    texts.append(("tileflow", format_tileflow(flow)))
    if options.stop_after == "tileflow":
        return CudaCompiled(src, options, tuple(texts), None, plan, flow)
    task = build_task(flow, ann)
    texts.append(("task", format_task(task)))
    if options.stop_after == "task":
        return CudaCompiled(src, options, tuple(texts), None, plan, flow)
    phys = build_physical(task, options.arch, options.precision, ann)
    texts.append(("physical", format_physical(phys)))
    return CudaCompiled(src, options, tuple(texts), phys, plan, flow)


def checkpoints(path: str, c: CudaCompiled) -> dict[str, str]:
    """`<stage>.json` for every printed stage: the files `resume_cuda` continues from."""
    opts = c.options
    out = {}
    for stage, text in c.texts:
        ck = Checkpoint(
            stage=stage,  # type: ignore[arg-type]
            source=path,
            source_sha256=source_digest(path),
            arch=opts.arch.name,
            precision=opts.precision,  # type: ignore[arg-type]
            defines=opts.defines,
            annotations=opts.annotations,
            applied_sha256=applied_digest(opts.annotations, stage),
            checkpoint=text,
        )
        out[f"{stage}.json"] = ck.to_json()
    return out


def resume_options(ck: Checkpoint, arch: Arch, stop_after: str | None) -> CudaOptions:
    """Options that rebuild a checkpoint and continue after it (to `stop_after`, or to
    the end); `resume_cuda` checks the rebuilt stage against the file."""
    if arch.name != ck.arch:
        raise LoomError(
            f"the checkpoint was compiled for {ck.arch}, not {arch.name}; pass --arch {ck.arch} "
            "or compile the source again for the other architecture."
        )
    if stop_after is not None and STAGES.index(stop_after) <= STAGES.index(ck.stage):
        raise LoomError(
            f"--stop-after {stop_after} does not come after the checkpoint's stage "
            f"({ck.stage}); choose a later stage or drop --stop-after."
        )
    return CudaOptions(arch, ck.precision, ck.defines, ck.annotations, stop_after)


def check_resumed(ck: Checkpoint, c: CudaCompiled) -> None:
    """The rebuilt stage must print exactly as the file's (else it was edited, or the
    compiler changed since)."""
    text = dict(c.texts).get(ck.stage)
    if text != ck.checkpoint:
        raise LoomError(
            f"the {ck.stage} checkpoint of {ck.source} does not match what its recorded "
            "source, defines and applied annotations produce (its printed stage was edited, "
            "or Loom changed since it was written); edit the later stages' annotations only, "
            "or compile the source again."
        )


def launches(c: CudaCompiled, sample: int | None = None) -> list[tuple[int, LaunchProgram]]:
    """(launch index, program) for every launch, or for `sample` evenly spaced host-loop
    steps of each loop (the index says where each sample sits)."""
    assert c.physical is not None
    plan = c.physical.task.flow.plan
    out: list[tuple[int, LaunchProgram]] = []
    all_launches = plan.launches()
    chosen = _sampled(len(all_launches), plan, sample)
    for n in chosen:
        step, env = all_launches[n]
        lp = lower_launch(c.physical, step.kernel, env, c.options.arch)
        if lp is not None:
            out.append((n, lp))
    return out


def _sampled(total: int, plan: object, sample: int | None) -> list[int]:
    if sample is None or total <= 2 * sample:
        return list(range(total))
    per = max(1, len(getattr(plan, "kernels", ())))
    steps = total // per
    picks = sorted({round(i * (steps - 1) / (sample - 1)) for i in range(sample)})
    return [s * per + j for s in picks for j in range(per) if s * per + j < total]


def initial_arrays(src: CudaProgram, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic inputs: PolyBench-style closed forms where the workload has one,
    a diagonally dominant random matrix for elimination (no pivoting needed)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for a in src.arrays:
        i, j = np.meshgrid(np.arange(a.rows), np.arange(a.cols), indexing="ij")
        x = rng.uniform(-1.0, 1.0, (a.rows, a.cols))
        if a.rows == a.cols:
            x = x + a.rows * np.eye(a.rows) / 4
        out[a.name] = x if src.host == "gaussian" else (i * (j + 2) + 2) % 97 / 97.0
    if src.host == "gaussian":
        for a in src.arrays:
            if a.name == "m":
                out["m"] = np.zeros((a.rows, a.cols))
    return out


def _round(x: np.ndarray, precision: str) -> np.ndarray:
    import torch

    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    if precision == "bf16":
        t = t.to(torch.bfloat16).float()
    return t.numpy().astype(np.float64)


@dataclass(frozen=True)
class VerifyReport:
    launches: int
    rel_frobenius: float
    """||device - fp64|| / ||fp64|| over the measured region."""
    region: str
    max_rel_error_emulated: float
    """max |device - emulated| / max |emulated|, the emulated reference computing in fp32
    with the device's storage precision between launches (a protocol check)."""
    seconds: float


def measured_region(
    src: CudaProgram, arrays: dict[str, np.ndarray], unstored: frozenset[str] = frozenset()
) -> tuple[np.ndarray, str]:
    """The seed's accuracy region: gaussian off-diagonal, jacobi interior, syrk all of C.
    Arrays in `unstored` (a fused producer's target, never written) are left out."""
    if src.host == "gaussian":
        a, m = arrays["a"], arrays["m"]
        if "m" in unstored:
            return a[np.triu_indices_from(a, 1)], "strict upper of a (m fused away)"
        return np.concatenate([a[np.triu_indices_from(a, 1)], m[np.tril_indices_from(m, -1)]]), (
            "off-diagonal (strict upper of a, strict lower of m)"
        )
    if src.host.startswith("jacobi"):
        return arrays["A"][1:-1, 1:-1].ravel(), "interior of A"
    target = [a.name for a in src.arrays][-1]
    return arrays[target].ravel(), f"all of {target}"


def verify_cuda(c: CudaCompiled, folder: str | None = None, native: bool = False) -> VerifyReport:
    """Run every launch on tt-lang-sim in order and compare with the FP64 reference.
    `native` computes bf16 launches in bf16 arithmetic (tt-lang-sim's native mode)
    instead of fp32; the emulated-reference deviation then measures that difference."""
    import time

    import torch

    from loom.backends.ttlang.execute import run_program

    t0 = time.perf_counter()
    prec = c.options.precision
    init = initial_arrays(c.source)
    dev = {k: _round(v, prec) for k, v in init.items()}
    n = 0
    for _, lp in launches(c):
        vals = {k: torch.from_numpy(v.astype(np.float32)) for k, v in dev.items()}
        from loom.cuda.consts import const_table

        vals["loom_const"] = torch.from_numpy(const_table(lp.consts).astype(np.float32))
        after = run_program(lp.program, vals, folder, native and prec == "bf16", c.options.arch)
        dev[lp.writes] = _round(after[lp.writes].numpy(), prec)
        n += 1
    ref64 = run_reference(c.source, init)
    assert c.physical is not None
    plan = c.physical.task.flow.plan
    unstored = (
        frozenset(a.name for a in plan.arrays) - {k.target for k in plan.kernels}
        if any(k.fused for k in plan.kernels)
        else frozenset()
    )
    got, region = measured_region(c.source, dev, unstored)
    want, _ = measured_region(c.source, ref64, unstored)
    rel = float(np.linalg.norm(got - want)) / max(float(np.linalg.norm(want)), 1e-300)
    own = run_reference(
        c.source, {k: _round(v, prec) for k, v in init.items()}, np.float32, prec, unstored
    )
    mine, _ = measured_region(c.source, own, unstored)
    emu = float(np.abs(got - mine).max() / max(float(np.abs(mine).max()), 1e-30))
    return VerifyReport(n, rel, region, emu, time.perf_counter() - t0)


@dataclass(frozen=True)
class TimingReport:
    cycles: float
    us: float
    launches: int
    simulated: int
    """Distinct launches simulated (steps sampled, identical programs simulated once)."""
    per_kernel: tuple[tuple[str, float], ...]
    """Cycles per kernel key, summed over launches."""


def _integrate(c: CudaCompiled, cost_of: dict[int, float]) -> float:
    """Sum of per-launch cycles, interpolating linearly between sampled steps."""
    assert c.physical is not None
    plan = c.physical.task.flow.plan
    all_launches = plan.launches()
    per = max(1, len(plan.kernels))
    total = 0.0
    keys = sorted(cost_of)
    for n in range(len(all_launches)):
        if n in cost_of:
            total += cost_of[n]
            continue
        same = [k for k in keys if k % per == n % per]
        lo = max((k for k in same if k < n), default=None)
        hi = min((k for k in same if k > n), default=None)
        if lo is None or hi is None:
            total += cost_of[lo if lo is not None else hi]  # type: ignore[index]
        else:
            w = (n - lo) / (hi - lo)
            total += (1 - w) * cost_of[lo] + w * cost_of[hi]
    return total


def _barrier_before(c: CudaCompiled, n: int) -> bool:
    """Launch `n` follows a launch it depends on (RAW) or that read what it writes (WAR):
    Physical's grid barrier stands at the boundary."""
    assert c.physical is not None
    seq = c.physical.task.flow.plan.launches()
    return n > 0 and c.physical.needs_barrier(seq[n - 1][0].kernel, seq[n][0].kernel)


def simulate_cuda(c: CudaCompiled, sample: int | None = 6) -> TimingReport:
    """Time the launch sequence on the discrete-event simulator: each launch's kernel
    cycles, plus the grid barrier before it when Physical places one there (the first
    launch pays no program launch: the seed times device work only)."""
    from loom.sim import SimOptions, from_arch, grid_barrier_cycles, simulate

    arch = c.options.arch
    params = from_arch(arch)
    cache: dict[object, float] = {}
    cost_of: dict[int, float] = {}
    kernel_of: dict[int, str] = {}
    for n, lp in launches(c, sample):
        key = replace(lp.program, notes=())
        if key not in cache:
            r = simulate(lp.program, arch, options=SimOptions(include_launch=False))
            cache[key] = r.kernel_cycles
        barrier = grid_barrier_cycles(params, lp.program.grid) if _barrier_before(c, n) else 0.0
        cost_of[n] = cache[key] + barrier
        kernel_of[n] = lp.kernel
    total = _integrate(c, cost_of)
    per_kernel = tuple(
        (k, _integrate(c, {n: v if kernel_of[n] == k else 0.0 for n, v in cost_of.items()}))
        for k in sorted(set(kernel_of.values()))
    )
    count = len(c.physical.task.flow.plan.launches()) if c.physical else 0
    return TimingReport(total, arch.cycles_to_us(total), count, len(cache), per_kernel)


def model_cuda(c: CudaCompiled, sample: int | None = 6) -> float:
    """The analytic model's cycles for the whole launch sequence."""
    assert c.physical is not None
    arch = c.options.arch
    cost_of = {
        n: launch_cost(c.physical, lp, arch).cycles
        + (barrier_cycles(arch, lp.program.grid) if _barrier_before(c, n) else 0.0)
        for n, lp in launches(c, sample)
    }
    return _integrate(c, cost_of)


SEED_ACCURACY = {
    ("gaussian", "fp32"): 9.3e-7,
    ("jacobi_2d", "fp32"): 9.5e-6,
    ("gaussian", "bf16"): 4.7e-3,
    ("jacobi_2d", "bf16"): 1.68,
    ("syrk", "bf16"): 1.0e-2,
}
"""Relative Frobenius errors vs FP64 reported by the seed (jacobi after 1000 steps)."""


def cuda_command(
    command: str,
    path: str,
    options: CudaOptions,
    folder: str | None = None,
    resumed: Checkpoint | None = None,
) -> tuple[int, str, dict[str, str]]:
    """Run one CLI command on a .cu file: (exit code, text to print, artifacts). With
    `resumed`, the compilation continues from that checkpoint (checked to match)."""
    c = compile_cuda(path, options)
    if resumed is not None:
        check_resumed(resumed, c)
    lines = [text for _, text in c.texts]
    artifacts = {f"{i + 1:02d}-{stage}.txt": text for i, (stage, text) in enumerate(c.texts)}
    artifacts.update(checkpoints(path, c))
    if c.physical is None:
        return 0, "".join(lines), artifacts
    from loom.backends.ttlang.emit import emit

    progs = launches(c, sample=2)
    artifacts.update(
        {f"{i + 5:02d}-launch{n}.py": emit(lp.program) for i, (n, lp) in enumerate(progs[:4])}
    )
    total = len(c.physical.task.flow.plan.launches())
    lines.append(
        f"lowered     {total} launch(es) into Programs; model {model_cuda(c):.0f} cycles "
        f"({options.arch.cycles_to_us(model_cuda(c)):.1f} us) on {options.arch.name}\n"
    )
    code = 0
    if command in ("verify", "run"):
        r = verify_cuda(c, folder)
        seed = SEED_ACCURACY.get((c.source.host, options.precision))
        ok = r.max_rel_error_emulated <= 2.0**-6
        code = 0 if ok else 1
        lines.append(
            f"verify      {'PASS' if ok else 'FAIL'} on tt-lang-sim: {r.launches} launches, "
            f"{options.precision} relative Frobenius error vs FP64 {r.rel_frobenius:.2e} on "
            f"{r.region} (seed: {f'{seed:.2g}' if seed else 'n/a'}); max rel deviation from "
            f"the emulated {options.precision} reference {r.max_rel_error_emulated:.1e}; "
            f"{r.seconds:.1f} s\n"
        )
    if command in ("simulate", "run"):
        t = simulate_cuda(c)
        parts = ", ".join(f"{k} {v:.0f}" for k, v in t.per_kernel)
        lines.append(
            f"simulate    {t.cycles:.0f} cycles = {t.us:.1f} us for {t.launches} launches "
            f"({t.simulated} distinct programs simulated; per kernel: {parts})\n"
        )
    return code, "".join(lines), artifacts
