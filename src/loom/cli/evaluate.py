"""`loom eval` and `loom sweep`: Loom against every baseline in the simulator, as Ray
tasks; the results CSV, tables, figures and case pages."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from loom.cli.cache import trace_cache
from loom.cli.outputs import write_atomic
from loom.errors import LoomError, UsageError


def _split(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in text.split(",") if x.strip()) if text else allowed
    bad = [x for x in items if x not in allowed]
    if bad:
        raise UsageError(
            f"unknown {what} {', '.join(bad)}; choose from {', '.join(allowed)} (comma-separated)."
        )
    return items


def _eval_cases(args: argparse.Namespace) -> list:  # type: ignore[type-arg]
    from loom.arch import list_archs, load_arch
    from loom.eval.cases import (
        ARCHS,
        FA_SCALE,
        KERNELS,
        PAPER_KERNELS,
        case,
        kernel_source,
        paper_cases,
        quick_cases,
    )
    from loom.kernels.registry import parse_shape, resolve_kernel

    if args.command == "eval":
        kernels = _split(args.kernels, KERNELS, "kernel")
        archs = _split(args.archs, ARCHS, "architecture")
        scale = FA_SCALE if args.fa_scale is None else args.fa_scale
        if scale < 1:
            raise UsageError(
                f"--fa-scale {scale}: flash attention runs at 1/N of the paper's tokens, so "
                "N must be a positive integer (1 for the paper's own)."
            )
        # --quick alone keeps to the paper's kernels; naming layer ops adds one shape each
        quick = kernels if args.kernels else PAPER_KERNELS
        chosen = quick_cases(archs, quick) if args.quick else paper_cases(kernels, archs, scale)
        return [c for c in chosen if c.kernel in kernels]
    if args.kernel not in KERNELS:
        raise UsageError(
            f"`loom sweep` runs the evaluation's kernels ({', '.join(KERNELS)}), not "
            f"{args.kernel!r}; baselines exist only for those."
        )
    archs = _split(args.archs, tuple(list_archs()), "architecture")
    spec = resolve_kernel(kernel_source(args.kernel))
    shapes = [parse_shape(text, spec) for text in args.shapes]
    for name in archs:
        load_arch(name)
    return [case(args.kernel, a, s) for a in archs for s in shapes]


def cmd_eval(args: argparse.Namespace) -> int:
    """Run the cases not yet in OUT/results.csv (as Ray tasks unless --jobs 1), keep the
    CSV current after every case, then print Tables 2 and 3 and draw the figures."""
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from loom.eval.rows import read_rows, rows_to_csv
    from loom.eval.run import EvalOptions
    from loom.eval.runner import RunnerOptions, run_cases

    cases = _eval_cases(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.csv"
    rows = read_rows(results)
    wanted = {c.key for c in cases}
    done = {r.case_key for r in rows}
    todo = [c for c in cases if c.key not in done]
    cache = trace_cache(args)
    options = EvalOptions(
        top_k=args.top_k,
        math_fidelity=args.math_fidelity,
        neighbours=not args.no_neighbours,
        cache_dir=str(cache.folder) if cache is not None else "",
    )
    jobs = args.jobs or os.cpu_count() or 1
    print(f"{len(cases)} cases, {len(cases) - len(todo)} already in {results}; running {len(todo)}")
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns) as progress:
        task = progress.add_task(args.command, total=len(todo))

        def finished(case, new) -> None:  # type: ignore[no-untyped-def]
            rows.extend(new)
            write_atomic(results, rows_to_csv(rows))
            progress.update(task, advance=1, description=f"{case.kernel} {case.arch}")

        try:
            run_cases(todo, options, RunnerOptions(jobs=jobs, address=args.address), finished)
        except KeyboardInterrupt:
            progress.stop()
            print(
                f"interrupted: {len({r.case_key for r in rows} & wanted)} of {len(cases)} "
                f"cases kept in {results}; run the same command again to finish."
            )
            return 130
    _eval_report(out, [r for r in rows if r.case_key in wanted])
    if args.pages:
        _eval_pages(out / "pages", cases, [r for r in rows if r.case_key in wanted], args)
    return 0


def _eval_pages(folder: Path, cases: list, rows: list, args: argparse.Namespace) -> None:  # type: ignore[type-arg]
    """One report page per case (Loom's pick, compiled as the evaluation compiles it, its
    simulation traced) and an index linking them with the baselines' simulated times."""
    from loom.api import compile_options
    from loom.api.reporting import report_data
    from loom.arch import load_arch
    from loom.eval.cases import kernel_source
    from loom.flows.cached import LazyKernel, compile_cached
    from loom.flows.lowered import simulate_lowered
    from loom.report.eval_pages import case_page, page_name, render_eval_index, simulated_top_k
    from loom.report.html import render_report

    pages = []
    for case in sorted(cases):
        arch = load_arch(case.arch)
        mine = [r for r in rows if r.case_key == case.key]

        fidelity = args.math_fidelity or arch.matmul.default_fidelity
        options = compile_options(arch, math_fidelity=fidelity, jobs=1, top_k=args.top_k)
        kernel = LazyKernel.of_file(kernel_source(case.kernel))
        try:
            result = compile_cached(kernel, case.shape_text, options, trace_cache(args), None)
        except LoomError as err:
            print(f"page        {case.kernel} {case.arch} {case.shape_text}: not written ({err})")
            continue
        sim = simulate_lowered(result.lowered, arch, result.log, trace=True)
        data = report_data(kernel, result, sim, None, "", simulated_top_k(mine))
        write_atomic(folder / page_name(case.kernel, case.arch, case.shape_text),
                      render_report(data))  # fmt: skip
        pages.append(case_page(data, case.shape_text, mine))
    write_atomic(folder / "index.html", render_eval_index(tuple(pages)))
    print(f"pages       {len(pages)} case reports, index in {folder / 'index.html'}")


def _eval_report(out: Path, rows: list) -> None:  # type: ignore[type-arg]
    from loom.report.eval_plots import eval_figures
    from loom.report.eval_tables import losses, table2, table3

    text = table2(rows) + "\n" + table3(rows)
    print(text, end="")
    write_atomic(out / "tables.txt", text + "\n" + losses(rows))
    for name, data in eval_figures(rows).items():
        write_atomic(out / name, data)
    print(f"results.csv, tables.txt and figures in {out}/")
