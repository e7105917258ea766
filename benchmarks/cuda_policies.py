"""The CUDA path's policy space: the model's ranking against the simulator, and the seed's
reported policy effects, reproduced or not.

For each workload and precision, every legal annotation set (`loom policies`) is ranked by
the analytic model and timed by the discrete-event simulator (the judge); the script
prints the Spearman rank correlation of the two over the whole space, and the regret of
the model's top pick (its simulated time over the best simulated time, minus one). Then
it measures, side by side on the simulator, the policy effects the seed reports.

    PYTHONPATH=src .venv/bin/python benchmarks/cuda_policies.py [--quick | --rows | --space NAME]
        [--define N=512] [--precision bf16] [--out FILE.jsonl] [--rescore FILE.jsonl]

Sizes are small enough for a 2-core machine; host loops with more than 12 steps are
timed on 6 evenly spaced steps and interpolated (exact for jacobi, whose steps are equal).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace

import numpy as np

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.flows.cuda import CudaOptions, compile_cuda, model_cuda, simulate_cuda
from loom.flows.cuda_policies import policy_space, rank_policies
from loom.sim import SimOptions, from_arch, simulate

os.environ.setdefault("OMP_NUM_THREADS", "1")
ARCH = load_arch("blackhole_p150_13x10")
WORKLOADS = {
    "gaussian": {"N": "256"},
    "jacobi_2d": {"N": "256", "TSTEPS": "20"},
    "syrk": {"N": "512", "M": "320"},
}


def _options(name: str, precision: str, ann: dict | None = None) -> CudaOptions:  # type: ignore[type-arg]
    return CudaOptions(
        ARCH, precision, tuple(WORKLOADS[name].items()), parse_annotations(ann or {}, "bench")
    )


def _sim(name: str, precision: str, ann: dict) -> float:  # type: ignore[type-arg]
    return simulate_cuda(
        compile_cuda(f"examples/cuda/{name}.cu", _options(name, precision, ann))
    ).us


def _spearman(a: list[float], b: list[float]) -> float:
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def space(name: str, precision: str, out: str | None = None) -> None:
    """Rank the whole space by the model and time every set on the simulator; with `out`,
    each set's figures are appended to a JSON-lines file as they come (a long run can be
    read, and its Spearman recomputed under a revised model, before it ends)."""
    t0 = time.perf_counter()
    ranking = rank_policies(f"examples/cuda/{name}.cu", _options(name, precision))
    model = [r.us for r in ranking.ranked]
    sims = []
    for r in ranking.ranked:
        opts = replace(_options(name, precision), annotations=r.annotations)
        sims.append(simulate_cuda(compile_cuda(f"examples/cuda/{name}.cu", opts)).us)
        if out:
            with open(out, "a") as f:
                row = {"workload": name, "defines": WORKLOADS[name], "precision": precision}
                row |= {"policy": r.annotations.name(), "model_us": r.us, "sim_us": sims[-1]}
                f.write(json.dumps(row, sort_keys=True) + "\n")
    best = min(sims)
    pick = sims[0]
    best_name = ranking.ranked[int(np.argmin(sims))].annotations.name()
    print(
        f"| {name} | {precision} | {len(model)} ({len(ranking.rejected)} rejected) | "
        f"{_spearman(model, sims):.2f} | {ranking.ranked[0].annotations.name()} "
        f"({pick:.1f} us) | {best_name} ({best:.1f} us) | {pick / best - 1:.1%} | "
        f"{time.perf_counter() - t0:.0f} s |",
        flush=True,
    )


def rescore(path: str) -> None:
    """A recorded space (`--out`) ranked again by the current model, against its recorded
    simulator times: for revisions of the model only (the simulator must be the one that
    recorded them; rerun `--space` after any change to it)."""
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    for prec in ("bf16", "fp32"):
        rs = [r for r in rows if r["precision"] == prec]
        if not rs:
            continue
        name = rs[0]["workload"]
        WORKLOADS[name] = dict(rs[0]["defines"])
        base = _options(name, prec)
        by_name = {
            a.name(): a
            for a in (
                parse_annotations(d, "(policy space)")
                for d in policy_space(f"examples/cuda/{name}.cu", base)
            )
        }
        model = [
            ARCH.cycles_to_us(
                model_cuda(
                    compile_cuda(
                        f"examples/cuda/{name}.cu",
                        replace(base, annotations=by_name[r["policy"]]),
                    )
                )
            )
            for r in rs
        ]
        sims = [r["sim_us"] for r in rs]
        names = [r["policy"] for r in rs]  # model ties as rank_policies breaks them
        changes = [0 if n == "default" else len(n.split()) for n in names]
        pick = min(range(len(rs)), key=lambda i: (round(model[i], 6), changes[i], names[i]))
        best = int(np.argmin(sims))
        print(
            f"| {name} {WORKLOADS[name]} | {prec} | {len(rs)} recorded | "
            f"{_spearman(model, sims):.2f} | {rs[pick]['policy']} ({sims[pick]:.1f} us) | "
            f"{rs[best]['policy']} ({sims[best]:.1f} us) | {sims[pick] / sims[best] - 1:.1%} |",
            flush=True,
        )


def effect(
    label: str,
    name: str,
    precision: str,
    base: dict,
    change: dict,  # type: ignore[type-arg]
    seed: str,
) -> None:
    a = _sim(name, precision, base)
    b = _sim(name, precision, _merge(base, change))
    print(f"| {label} | {precision} | {a:.1f} | {b:.1f} | {a / b:.2f}x | {seed} |", flush=True)


def _deliveries(ann: dict) -> int:  # type: ignore[type-arg]
    """Operand panel deliveries per core of the busiest core (both operands)."""
    from loom.flows.cuda import launches

    c = compile_cuda("examples/cuda/syrk.cu", _options("syrk", "bf16", ann))
    ((_, lp),) = launches(c)
    flow = c.flow.kernels[0] if c.flow else None
    assert flow is not None and flow.contraction is not None
    gy, gx = lp.program.grid
    per_core = -(-lp.shape[0] // gy) * -(-lp.shape[1] // gx)
    blocked = ann.get("tileplan", {}).get("interchange", False)
    return 2 * flow.contraction.blocks * (1 if blocked else per_core)


def _busy(name: str, precision: str, defines: dict, ann: dict) -> str:  # type: ignore[type-arg]
    """Cycles per output tile of a workload's first launch and the busiest core's busy
    fraction per engine (DM0 reader, compute, DM1 writer): which engine bounds it."""
    from loom.flows.cuda import launches

    opts = CudaOptions(ARCH, precision, tuple(defines.items()), parse_annotations(ann, "bench"))
    (_, lp), *_ = launches(compile_cuda(f"examples/cuda/{name}.cu", opts))
    r = simulate(lp.program, ARCH, options=SimOptions(include_launch=False))
    gy, gx = lp.program.grid
    tiles = -(-lp.shape[0] // gy) * -(-lp.shape[1] // gx)
    busy = " / ".join(f"{e.max:.2f}" for e in sorted(r.engine_busy, key=lambda e: e.engine))
    return f"{ARCH.cycles_to_us(r.kernel_cycles):.1f} | {r.kernel_cycles / tiles:.0f} | {busy}"


def mechanisms(precisions: list[str]) -> None:
    """Why the seed's DM-side effects do (not) carry over: which engine bounds Loom's
    realization, what the seed's DM halo patch would cost on the simulator's NoC, and
    syrk's lane split at the seed's own size."""
    print("\n## Mechanisms\n")
    print("jacobi_2d stencil launch (B <- stencil(A)), N=1024, one step: 12 tiles per core")
    print("\n| precision | policy | us | cycles per tile | busy compute / reader / writer |")
    print("|---|---|---|---|---|")
    jac = {"N": "1024", "TSTEPS": "1"}
    for prec in precisions:
        for label, ann in (
            ("default", {}),
            ("dm_lanes: 2", {"task": {"dm_lanes": 2}}),
            ("halo: transposed", {"tileflow": {"halo": "transposed"}}),
        ):
            print(f"| {prec} | {label} | {_busy('jacobi_2d', prec, jac, ann)} |", flush=True)
    p = from_arch(ARCH)
    print(
        "\nThe seed's DM halo patch of one tile on this simulator's NoC costs (issue "
        f"{p.issue_cycles:.0f} cycles per transaction, read latency {p.read_latency_cycles:.0f}):"
    )
    for prec, e in (("bf16", 2), ("fp32", 4)):
        col = 32 * e / p.unicast_cap(e) + p.read_latency_cycles
        row = 2 * 16 * e / p.unicast_cap(16 * e) + p.read_latency_cycles
        print(
            f"  {prec}: column patch (32 strided {e} B element reads) {col:.0f} cycles, "
            f"row patch in the transposed basis (2 contiguous {16 * e} B face rows) "
            f"{row:.0f} cycles"
        )
    seed = {"N": "3200", "M": "3200"}
    print("\nsyrk at the seed's size (N = M = 3200: 10x10 grid, 10x10 output tiles per core,")
    print("strip 10 + interchange: 20 deliveries per core; seed: 0.365 ms, split +7%), bf16")
    print("\n| policy | us | cycles per tile | busy compute / reader / writer |")
    print("|---|---|---|---|")
    for lanes in (1, 2):
        ann = {"tileplan": {"strip_mine": 10, "interchange": True}, "task": {"dm_lanes": lanes}}
        print(f"| dm_lanes: {lanes} | {_busy('syrk', 'bf16', seed, ann)} |", flush=True)


def row_streaming(precisions: list[str]) -> None:
    """The seed's "row streaming with DM masks" (jacobi, 1.14x at BF16), column against
    row streaming side by side, model and simulator, at N=512, where a core owns 2 tile
    columns of a 16-tile row: jacobi (its column shift as a 2x2 band operator per shard
    row; it has no guard to sink, so its masks stay on compute) and gaussian with DM
    masks."""
    cases = [
        ("jacobi_2d", (("N", "512"), ("TSTEPS", "20")), {}),
        ("jacobi_2d", (("N", "512"), ("TSTEPS", "20")), {"task": {"dm_lanes": 2}}),
        (
            "jacobi_2d",
            (("N", "512"), ("TSTEPS", "20")),
            {"tileflow": {"stencil_operator": "fused"}},
        ),
        ("gaussian", (("N", "512"),), {"tileflow": {"guard_mask": "dm"}}),
    ]
    print("\nN=512, column -> row streaming (model and simulator):\n")
    print(
        "| workload | base policy | precision | column us (model / sim) | row us (model / sim) "
        "| speedup model / sim |"
    )
    print("|---|---|---|---|---|---|")
    for name, defines, base in cases:
        for prec in precisions:
            out = []
            for ann in (base, _merge(base, {"task": {"streaming": "row"}})):
                opts = CudaOptions(ARCH, prec, defines, parse_annotations(ann, "bench"))
                c = compile_cuda(f"examples/cuda/{name}.cu", opts)
                out.append((ARCH.cycles_to_us(model_cuda(c)), simulate_cuda(c).us))
            (mc, sc), (mr, sr) = out
            print(
                f"| {name} | {parse_annotations(base, 'bench').name()} | {prec} | "
                f"{mc:.1f} / {sc:.1f} | {mr:.1f} / {sr:.1f} | {mc / mr:.2f}x / {sc / sr:.2f}x |",
                flush=True,
            )


def _merge(a: dict, b: dict) -> dict:  # type: ignore[type-arg]
    out = {k: dict(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, {}).update(v)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="bf16 only, effects only")
    p.add_argument("--rows", action="store_true", help="only the row-streaming comparison")
    p.add_argument("--space", choices=sorted(WORKLOADS), help="only this workload's space")
    p.add_argument(
        "--define",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="with --space: override a size of that workload (e.g. N=512)",
    )
    p.add_argument("--precision", choices=["bf16", "fp32"], help="only this precision")
    p.add_argument("--out", help="with --space: append each set's figures to this JSON-lines file")
    p.add_argument(
        "--rescore",
        metavar="FILE",
        help="rank a space recorded with --out again by the current model (no simulation)",
    )
    args = p.parse_args()
    if args.rescore:
        print("| space | precision | sets | Spearman | model's pick | simulator's best | regret |")
        print("|---|---|---|---|---|---|---|")
        rescore(args.rescore)
        return
    precisions = ["bf16"] if args.quick else ["bf16", "fp32"]
    if args.precision:
        precisions = [args.precision]
    for d in args.define:
        key, _, value = d.partition("=")
        if not args.space or not value:
            p.error("--define NAME=VALUE needs --space")
        WORKLOADS[args.space][key] = value
    if args.rows:
        row_streaming(precisions)
        return
    if args.space:
        print(f"arch {ARCH.name}; {args.space} {WORKLOADS[args.space]}\n")
        print(
            "| workload | precision | configurations | Spearman | model's pick | "
            "simulator's best | regret | time |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for prec in precisions:
            space(args.space, prec, args.out)
        return
    print(f"arch {ARCH.name}; sizes {WORKLOADS}\n")
    print("## Seed effects on the simulator (speedup = base / changed)\n")
    print("| effect | precision | base us | changed us | speedup | seed |")
    print("|---|---|---|---|---|---|")
    for prec in precisions:
        seed_lane = "1.53x" if prec == "bf16" else "~1x"
        effect(
            "jacobi: second DM lane (N/S on DM0, W/E on DM1)",
            "jacobi_2d",
            prec,
            {},
            {"task": {"dm_lanes": 2}},
            seed_lane,
        )
        effect(
            "syrk: strip-mine 10 reduction tiles per delivery",
            "syrk",
            prec,
            {},
            {"tileplan": {"strip_mine": 10}},
            "5.57x",
        )
        effect(
            "syrk: strip-mine 10 + block loop outermost",
            "syrk",
            prec,
            {},
            {"tileplan": {"strip_mine": 10, "interchange": True}},
            "5.36x",
        )
        effect(
            "syrk: DM-lane split, reduction innermost (strip 10)",
            "syrk",
            prec,
            {"tileplan": {"strip_mine": 10}},
            {"task": {"dm_lanes": 2}},
            "1.92x (-48%)",
        )
        effect(
            "syrk: DM-lane split after interchange (strip 10)",
            "syrk",
            prec,
            {"tileplan": {"strip_mine": 10, "interchange": True}},
            {"task": {"dm_lanes": 2}},
            "0.93x (+7%)",
        )
        effect(
            "syrk: depth-two delivery (strip 10, interchange)",
            "syrk",
            prec,
            {"tileplan": {"strip_mine": 10, "interchange": True}},
            {"physical": {"cb_depth": 2}},
            "1.27x",
        )
        effect(
            "jacobi: in-tile shifts summed per axis (vs transposed-basis halo)",
            "jacobi_2d",
            prec,
            {},
            {"tileflow": {"stencil_operator": "fused"}},
            "1.49x/1.29x (other policy)",
        )
        effect(
            "gaussian: masks only on cut tiles (vs on every tile)",
            "gaussian",
            prec,
            {"tileplan": {"predicates": "all"}},
            {"tileplan": {"predicates": "boundary"}},
            "n/a",
        )
        effect(
            "gaussian: masks to DM (guard sunk into DM-delivered selectors)",
            "gaussian",
            prec,
            {},
            {"tileflow": {"guard_mask": "dm"}},
            "3.19x" if prec == "bf16" else "1.93x",
        )
        effect(
            "gaussian: masks to DM, every tile predicated",
            "gaussian",
            prec,
            {"tileplan": {"predicates": "all"}},
            {"tileflow": {"guard_mask": "dm"}},
            "3.19x" if prec == "bf16" else "1.93x",
        )
        effect(
            "gaussian: reciprocal of a[t][t] once per core (after masks to DM)",
            "gaussian",
            prec,
            {"tileflow": {"guard_mask": "dm"}},
            {"tileflow": {"reciprocal": "hoisted"}},
            "1.07x at fp32 (DM-side)" if prec == "fp32" else "n/a",
        )
        effect(
            "gaussian: factor fused into the update (forwarded along core rows, m not stored)",
            "gaussian",
            prec,
            {},
            {"tileplan": {"fuse": ["Fan1", "Fan2"]}},
            "n/a",
        )
        effect(
            "jacobi: transposed-basis halo (vs column patch)",
            "jacobi_2d",
            prec,
            {},
            {"tileflow": {"halo": "transposed"}},
            "1.49x" if prec == "bf16" else "1.29x",
        )
        effect(
            "jacobi: sender-side halo conversion (vs receiver-side)",
            "jacobi_2d",
            prec,
            {},
            {"tileflow": {"halo_conversion": "sender"}},
            "5 -> 2 transposes per tile (no time given)",
        )
        effect(
            "jacobi: sender-side halo conversion, fused stencil, two lanes",
            "jacobi_2d",
            prec,
            {"tileflow": {"stencil_operator": "fused"}, "task": {"dm_lanes": 2}},
            {"tileflow": {"halo_conversion": "sender"}},
            "n/a",
        )
    row_streaming(precisions)
    print("\nsyrk reduction deliveries per core (the seed: 20,000 -> 2,000 -> 20):")
    for ann in (
        {},
        {"tileplan": {"strip_mine": 10}},
        {"tileplan": {"strip_mine": 10, "interchange": True}},
    ):
        print(f"  {parse_annotations(ann, 'bench').name():32} {_deliveries(ann)}")
    mechanisms(precisions)
    if args.quick:
        return
    print("\n## Model ranking vs simulator over each space\n")
    print(
        "| workload | precision | configurations | Spearman | model's pick | simulator's best "
        "| regret | time |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in WORKLOADS:
        for prec in precisions:
            space(name, prec)


if __name__ == "__main__":
    main()
