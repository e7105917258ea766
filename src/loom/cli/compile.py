"""`loom compile`, `verify`, `simulate` and `run`: compile (or read a schedule), then
verify on tt-lang-sim and time on the simulator, print the figures, write the outputs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from loom.cli.cache import compile_from_args
from loom.cli.explain import print_explain
from loom.cli.outputs import write_atomic, write_dump, write_file
from loom.errors import LoomError, UsageError


def cmd_compile(args: argparse.Namespace) -> int:
    from loom.report import compile_artifacts, summary

    kernel, result = compile_from_args(args)
    artifacts = compile_artifacts(result) if args.dump_dir else {}
    write_dump(args.dump_dir, artifacts)
    if args.json:
        print(result.schedule.to_json(), end="")
    else:
        print(summary(result), end="")
        print_reused(kernel)
        if args.dump_dir:
            print(f"artifacts   {len(artifacts)} files in {args.dump_dir}")
        if args.explain:
            print_explain(kernel, result)
    if args.html:
        _write_html(args, kernel, result)
    return 0


def print_reused(kernel: Any) -> None:
    """Say so when the compile result came from the cache (the compile time shown is the
    original one)."""
    if getattr(kernel, "reused", False):
        print("cache       compile result reused from the cache (--no-cache compiles again)")


def _read_schedule(path: str):  # type: ignore[no-untyped-def]
    from loom.errors import ScheduleError
    from loom.ir.schedule_file import parse_schedule

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScheduleError(
            f"schedule file {path!r} does not exist; pass a schedule.json."
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ScheduleError(
            f"schedule file {path!r} cannot be read ({err}); pass a readable schedule.json."
        ) from None
    return parse_schedule(text, path)


def _lowered(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """(spec, arch, Lowered, artifacts, compile result or None) for verify/simulate."""
    from loom.arch import load_arch
    from loom.flows.helion import load_schedule
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel
    from loom.report import compile_artifacts

    if args.schedule and getattr(args, "html", None):
        raise LoomError(
            "--html needs a compile (the report explains the solver's choice); drop "
            "--schedule, or drop --html."
        )
    if args.schedule:
        schedule = _read_schedule(args.schedule)
        arch = load_arch(args.arch or schedule.arch)
        spec = resolve_kernel(args.kernel or schedule.kernel)
        log = StageLog()
        lowered = load_schedule(spec, schedule, arch, log)
        artifacts = {**log.artifacts, "schedule.json": schedule.to_json()}
        return spec, arch, lowered, artifacts, None, log
    if not args.kernel:
        raise UsageError("name a kernel (or pass --schedule schedule.json); see `loom --help`.")
    kernel, result = compile_from_args(args)  # a LazyKernel answers as the spec does
    artifacts = compile_artifacts(result) if args.dump_dir else {}
    return kernel, result.arch, result.lowered, artifacts, result, result.log


def _verify(spec, lowered, log, arch, quiet: bool = False) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Verify on tt-lang-sim; print the verdict unless `quiet`; return it as JSON data."""
    data: dict[str, Any] = _verify_outcome(spec, lowered, log, arch, quiet)[0]
    return data


def _verify_outcome(spec, lowered, log, arch, quiet: bool = False):  # type: ignore[no-untyped-def]
    """(JSON-ready verdict, VerifyResult or None when tt-lang-sim rejected the kernel)."""
    from loom.backends.ttlang import noise_note
    from loom.errors import VerificationError
    from loom.flows.lowered import verify_lowered

    try:
        outcome = verify_lowered(spec, lowered, log, arch)
    except VerificationError as err:
        if not quiet:
            raise
        return {"passed": False, "message": str(err)}, None
    if not quiet:
        verdict = "PASS" if outcome.passed else "FAIL"
        if spec.file is not None:
            print(f"reference   {outcome.reference}")
            for check in outcome.outputs:
                print(
                    f"output      {check.name}: {'PASS' if check.passed else 'FAIL'} max abs "
                    f"error {check.max_abs_error:.3e}, max rel error {check.max_rel_error:.3e} "
                    f"(tolerance {check.tolerance:.3e}{noise_note(check)})"
                )
        print(
            f"verify      {verdict} on tt-lang-sim: max abs error {outcome.max_abs_error:.3e}, "
            f"max rel error {outcome.max_rel_error:.3e} (tolerance {outcome.tolerance:.3e}), "
            f"{outcome.wall_seconds:.1f} s"
        )
        if outcome.format_note:
            print(f"            {outcome.format_note}")
        if not outcome.passed:
            print(f"error: {outcome.message}", file=sys.stderr)
    return {
        "passed": outcome.passed,
        "max_abs_error": outcome.max_abs_error,
        "max_rel_error": outcome.max_rel_error,
        "tolerance": outcome.tolerance,
        "format_note": outcome.format_note,
        "reference": outcome.reference,
        "outputs": [
            {
                "name": c.name,
                "passed": c.passed,
                "max_abs_error": c.max_abs_error,
                "max_rel_error": c.max_rel_error,
                "tolerance": c.tolerance,
                "noise": c.noise,
            }
            for c in outcome.outputs
        ],
        "timings": {"simulator_wall_seconds": outcome.wall_seconds},
    }, outcome


def _simulate_result(args: argparse.Namespace, spec, arch, lowered, log):  # type: ignore[no-untyped-def]
    """(JSON-ready figures, SimResult); traces when --trace or --html asks for it."""
    from loom.flows.lowered import simulate_lowered
    from loom.report import simulation_dict, simulation_summary
    from loom.sim import trace_json

    trace = bool(args.trace or getattr(args, "html", None))
    sim = simulate_lowered(lowered, arch, log, trace=trace)
    flops = lowered.flops(spec.flops)
    modeled = round(lowered.modeled_cycles(arch))  # every launch, barriers included
    modeled_bytes = lowered.modeled_dram_bytes()
    if not args.json:
        print(simulation_summary(sim, arch, modeled, flops, modeled_bytes), end="")
    if args.trace:
        write_file(args.trace, trace_json(sim.trace_events))
    data = simulation_dict(sim, arch, modeled, flops, modeled_bytes)
    # wall-clock figures differ between identical runs: keep them apart from the results
    data["timings"] = {"events_per_second": data.pop("events_per_second", 0)}
    return data, sim


def cmd_verify(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
        print_reused(spec)
    data = _verify(spec, lowered, log, arch, quiet=args.json)
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    return 0 if data["passed"] else 1


def cmd_simulate(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
        print_reused(spec)
    data, sim = _simulate_result(args, spec, arch, lowered, log)
    if args.json:
        print(json.dumps(data, indent=2))
    if args.html:
        _write_html(args, spec, result, sim, None, _top_k_sims(result, log))
    return 0


def _top_k_sims(result: Any, log: Any) -> tuple[tuple[str, float], ...]:
    from loom.flows.helion import simulate_top_k

    return simulate_top_k(result, log) if result is not None else ()


def cmd_run(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
        print_reused(spec)
    verified, outcome = _verify_outcome(spec, lowered, log, arch, quiet=args.json)
    data, sim = _simulate_result(args, spec, arch, lowered, log)
    if args.json:
        print(
            json.dumps(
                {
                    "schedule": json.loads(lowered.schedule.to_json()),
                    "verify": verified,
                    "simulation": data,
                },
                indent=2,
            )
        )
    elif args.dump_dir:
        print(
            f"artifacts   {len(artifacts)} files in {args.dump_dir} "
            "(TT-Lang kernel: kernel_ttlang.py)"
        )
    if args.html:
        _write_html(args, spec, result, sim, outcome, _top_k_sims(result, log))
    return 0 if verified["passed"] else 1


def _write_html(  # type: ignore[no-untyped-def]
    args: argparse.Namespace, kernel, result, sim=None, verify=None, top_k=()
) -> None:
    """Render the report and write it (and the simulator's trace beside it) atomically."""
    from loom.api.reporting import report_data
    from loom.report.html import render_report
    from loom.sim import trace_json

    if result is None:
        raise LoomError(
            "--html needs a compile (the report explains the solver's choice); drop "
            "--schedule, or drop --html."
        )
    target = Path(args.html)
    trace_name = f"{target.stem}.trace.json" if sim is not None and sim.trace_events else ""
    with result.log.stage("report"):
        page = render_report(report_data(kernel, result, sim, verify, trace_name, top_k))
        try:
            if trace_name:
                write_atomic(target.with_name(trace_name), trace_json(sim.trace_events))
            write_atomic(target, page)
        except OSError as err:
            raise LoomError(
                f"cannot write the report to {str(target)!r} ({err.strerror or err}); pass "
                "--html a path in a writable folder."
            ) from None
    if not getattr(args, "json", False):
        print(f"report      {target} (open it in a browser)")
