"""`loom` command line: the only module that reads the environment or writes files."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from loom.errors import LoomError


def _arch_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arch", default="wormhole_n150", help="built-in architecture name or a YAML file"
    )


def _kernel_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kernel", help="gemm | flash_attention | flash_decode | path/to/kernel.py")
    _arch_arg(parser)
    parser.add_argument("--shape", help="e.g. M=4096,N=4096,K=4096 or B=1,H=8,S=2048,D=64")
    _file_args(parser)


def _file_args(parser: argparse.ArgumentParser) -> None:
    """Options of a Helion file taken as it is (several kernels, no Loom contract)."""
    parser.add_argument("--kernel", dest="kernel_name", help="which kernel of the file")
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        help="a kernel argument: x=1024x512:bf16 (tensor) or eps=1e-5 (scalar); repeatable",
    )
    parser.add_argument(
        "--reference", help="MODULE:FUNC computing the outputs (default: the file's reference)"
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loom",
        description="Tuning-free compiler of Helion tile kernels for Tenstorrent chips.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    archs = sub.add_parser("archs", help="list the built-in architectures, or show one")
    archs.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    archs.add_argument("name", nargs="?", help="architecture name or YAML file (for show)")

    compile_ = sub.add_parser("compile", help="compile a kernel and print the chosen schedule")
    _kernel_args(compile_)
    _solver_args(compile_)
    compile_.add_argument("--dump-dir", help="write every stage's artifact into this folder")
    compile_.add_argument("--json", action="store_true", help="print the Schedule as JSON")
    compile_.add_argument(
        "--explain", action="store_true", help="also say why, in sentences (see `loom explain`)"
    )
    _report_args(compile_)

    explain = sub.add_parser("explain", help="compile a kernel and say why Loom chose what it did")
    _kernel_args(explain)
    _solver_args(explain)
    _speed_args(explain)

    for name, text in (
        ("verify", "compile, emit TT-Lang, run it on tt-lang-sim and compare with torch"),
        ("simulate", "compile and time the kernel on the discrete-event simulator"),
        ("run", "compile, verify on tt-lang-sim and simulate: the whole job"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("kernel", nargs="?", help="kernel name or file (default: the schedule's)")
        _arch_arg(cmd)
        cmd.add_argument("--shape", help="e.g. M=512,N=512,K=512")
        _file_args(cmd)
        cmd.add_argument("--schedule", help="use this schedule.json instead of compiling")
        cmd.add_argument("--dump-dir", help="write every stage's artifact into this folder")
        _solver_args(cmd)
        if name in ("simulate", "run"):
            cmd.add_argument("--trace", help="write a Chrome/Perfetto trace JSON here")
            cmd.add_argument("--json", action="store_true", help="print the results as JSON")
            _report_args(cmd)

    for cmd in (compile_, *(sub.choices[n] for n in ("verify", "simulate", "run"))):
        _cuda_args(cmd)
    pol = sub.add_parser("policies", help="rank the legal annotation sets of a .cu file")
    pol.add_argument("kernel", help="path/to/file.cu")
    _arch_arg(pol)
    _cuda_args(pol)
    pol.add_argument("--top", type=int, default=10, help="policies printed")

    cands = sub.add_parser("candidates", help="list the mapping candidates of a kernel")
    _kernel_args(cands)
    cands.add_argument("--json", action="store_true", help="print the candidates as JSON")
    return parser


def _report_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--html",
        metavar="PATH",
        help="write a self-contained HTML report here (with simulate/run: the simulator's "
        "Perfetto trace too, beside it as NAME.trace.json)",
    )
    _speed_args(parser)


def _speed_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-cache", action="store_true", help="trace the kernel again (ignore the Tile IR cache)"
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="no progress on the terminal"
    )


def _cuda_args(parser: argparse.ArgumentParser) -> None:
    """Options of the affine CUDA path (a kernel given as a .cu file)."""
    parser.add_argument("--define", action="append", default=[], help=".cu only: NAME=VALUE")
    parser.add_argument("--annotations", help=".cu only: policy annotations (YAML)")
    parser.add_argument(
        "--stop-after", choices=["tileplan", "tileflow", "task", "physical"],
        help=".cu only: print the checkpoints up to this one and stop",
    )
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="fp32",
                        help=".cu only: element type of the arrays")


def _solver_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=int, default=0, help="parallel solves (default: all cores)")
    parser.add_argument("--top-k", type=int, default=5, help="candidates kept in the ranking")
    parser.add_argument("--solver", choices=["cpsat", "enumerate"], default="cpsat")
    parser.add_argument(
        "--refine",
        type=int,
        default=0,
        metavar="K",
        help="simulate the model's top K schedules and keep the simulator's fastest (default off)",
    )
    parser.add_argument("--math-fidelity", choices=["LoFi", "HiFi2", "HiFi3", "HiFi4"], default="")
    parser.add_argument(
        "--dtype",
        default="",
        help="data formats: a default for every tensor argument (bf16, fp32, bfp8, bfp4 or "
        "TTNN's bfloat8_b...), then arg=format overrides and acc=format for the "
        "accumulator, e.g. bfp8,c=bf16,acc=fp32",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=10.0,
        help="per-candidate CP-SAT limit in deterministic seconds",
    )


def _cmd_archs(args: argparse.Namespace) -> int:
    from loom.arch import describe_arch, list_archs, load_arch

    if args.action == "show":
        if not args.name:
            raise LoomError("`loom archs show` needs an architecture name; see `loom archs`.")
        print(describe_arch(load_arch(args.name)), end="")
        return 0
    for name in list_archs():
        arch = load_arch(name)
        print(
            f"{name:24} {arch.grid_x}x{arch.grid_y} cores @ {arch.clock_ghz} GHz  "
            f"{arch.description}"
        )
    return 0


def _write_dump(dump_dir: str | None, artifacts: dict[str, str]) -> None:
    """Write all artifacts at once, replacing the folder only when everything succeeded."""
    if not dump_dir:
        return
    target = Path(dump_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name, text in artifacts.items():
            (staging / name).write_text(text)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _load_kernel(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from loom.arch import load_arch
    from loom.kernels.registry import parse_shape, resolve_kernel

    arch = load_arch(args.arch)
    spec = resolve_kernel(
        args.kernel,
        getattr(args, "kernel_name", None),
        getattr(args, "arg", None) or (),
        getattr(args, "reference", None),
    )
    return arch, spec, parse_shape(args.shape, spec)


def _compile(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """(kernel, CompileResult); the kernel's Helion module is imported only when needed."""
    from loom.arch import load_arch
    from loom.clicompile import compile_cached
    from loom.pipeline import CompileOptions

    arch = load_arch(args.arch)
    if args.top_k < 1 or args.jobs < 0:
        raise LoomError("--top-k must be >= 1 and --jobs >= 0; fix the option.")

    def options(shape: dict[str, int]) -> CompileOptions:
        return CompileOptions(
            arch=arch,
            shape=shape,
            math_fidelity=args.math_fidelity,
            formats=args.dtype,
            jobs=args.jobs,
            top_k=args.top_k,
            solver=args.solver,
            time_limit_s=args.time_limit,
            refine=args.refine,
        )

    return compile_cached(
        args.kernel,
        args.shape,
        options,
        _trace_cache(args),
        _progress(args),
        args.dtype,
        (
            getattr(args, "kernel_name", None),
            tuple(getattr(args, "arg", None) or ()),
            getattr(args, "reference", None),
        ),
    )


def _trace_cache(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The Tile IR cache under the user's cache folder ($LOOM_CACHE_DIR overrides it)."""
    if getattr(args, "no_cache", False):
        return None
    from loom.tracecache import TraceCache

    folder = os.environ.get("LOOM_CACHE_DIR")
    if not folder:
        from platformdirs import user_cache_dir

        folder = str(Path(user_cache_dir("loom")) / "tile-ir")
    return TraceCache(Path(folder))


def _progress(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """A spinner per stage on a terminal; nothing with --quiet, --json or when piped."""
    if getattr(args, "quiet", False) or getattr(args, "json", False) or not sys.stderr.isatty():
        return None
    from loom.console import StageProgress

    return StageProgress()


def _write_html(  # type: ignore[no-untyped-def]
    args: argparse.Namespace, kernel, result, sim=None, verify=None, top_k=()
) -> None:
    """Render the report and write it (and the simulator's trace beside it) atomically."""
    from loom.clicompile import report_data
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
                _write_atomic(target.with_name(trace_name), trace_json(sim.trace_events))
            _write_atomic(target, page)
        except OSError as err:
            raise LoomError(
                f"cannot write the report to {str(target)!r} ({err.strerror or err}); pass "
                "--html a path in a writable folder."
            ) from None
    if not getattr(args, "json", False):
        print(f"report      {target} (open it in a browser)")


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _cmd_compile(args: argparse.Namespace) -> int:
    from loom.report import compile_artifacts, summary

    kernel, result = _compile(args)
    artifacts = compile_artifacts(result)
    _write_dump(args.dump_dir, artifacts)
    if args.json:
        print(result.schedule.to_json(), end="")
    else:
        print(summary(result), end="")
        if args.dump_dir:
            print(f"artifacts   {len(artifacts)} files in {args.dump_dir}")
        if args.explain:
            _print_explain(kernel, result)
    if args.html:
        _write_html(args, kernel, result)
    return 0


def _print_explain(kernel, result) -> None:  # type: ignore[no-untyped-def]
    from loom.clicompile import report_data
    from loom.report.explain_text import explain_sentences

    print("\nWhy:")
    for sentence in explain_sentences(report_data(kernel, result)):
        print(f"  - {sentence}")


def _cmd_explain(args: argparse.Namespace) -> int:
    kernel, result = _compile(args)
    _print_explain(kernel, result)
    return 0


def _read_schedule(path: str):  # type: ignore[no-untyped-def]
    from loom.errors import ScheduleError
    from loom.ir.schedule import schedule_from_dict

    try:
        return schedule_from_dict(json.loads(Path(path).read_text()))
    except FileNotFoundError:
        raise ScheduleError(
            f"schedule file {path!r} does not exist; pass a schedule.json."
        ) from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise ScheduleError(
            f"schedule file {path!r} is not a valid Loom schedule ({type(err).__name__}: {err}); "
            "write it with `loom compile ... --json` or follow the fields of schedule.json."
        ) from None


def _lowered(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """(spec, arch, Lowered, artifacts, compile result or None) for verify/simulate."""
    from loom.arch import load_arch
    from loom.kernels.registry import resolve_kernel
    from loom.pipeline import StageLog, load_schedule
    from loom.report import compile_artifacts

    if args.schedule and getattr(args, "html", None):
        raise LoomError(
            "--html needs a compile (the report explains the solver's choice); drop "
            "--schedule, or drop --html."
        )
    if args.schedule:
        schedule = _read_schedule(args.schedule)
        arch = load_arch(args.arch if args.arch != "wormhole_n150" else schedule.arch)
        spec = resolve_kernel(args.kernel or schedule.kernel)
        log = StageLog()
        lowered = load_schedule(spec, schedule, arch, log)
        artifacts = {**log.artifacts, "schedule.json": schedule.to_json()}
        return spec, arch, lowered, artifacts, None, log
    if not args.kernel:
        raise LoomError("name a kernel (or pass --schedule schedule.json); see `loom --help`.")
    spec, result = _compile(args)
    return spec, result.arch, result.lowered, compile_artifacts(result), result, result.log


def _verify(spec, lowered, log) -> int:  # type: ignore[no-untyped-def]
    return _verify_outcome(spec, lowered, log)[0]


def _verify_outcome(spec, lowered, log):  # type: ignore[no-untyped-def]
    """(exit code, VerifyResult), printing the verdict."""
    from loom.pipeline import verify_lowered

    outcome = verify_lowered(spec, lowered, log)
    verdict = "PASS" if outcome.passed else "FAIL"
    if spec.file is not None:
        print(f"reference   {spec.file.reference_name}")
        for check in outcome.outputs:
            print(
                f"output      {check.name}: {'PASS' if check.passed else 'FAIL'} max abs error "
                f"{check.max_abs_error:.3e}, max rel error {check.max_rel_error:.3e} "
                f"(tolerance {check.tolerance:.3e})"
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
        return 1, outcome
    return 0, outcome


def _simulate(args: argparse.Namespace, spec, arch, lowered, log) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return _simulate_result(args, spec, arch, lowered, log)[0]


def _simulate_result(args: argparse.Namespace, spec, arch, lowered, log):  # type: ignore[no-untyped-def]
    """(JSON-ready figures, SimResult); traces when --trace or --html asks for it."""
    from loom.pipeline import simulate_lowered
    from loom.report import simulation_dict, simulation_summary
    from loom.sim import trace_json

    sim = simulate_lowered(lowered, arch, log, trace=bool(args.trace or args.html))
    if args.trace:
        Path(args.trace).write_text(trace_json(sim.trace_events))
    flops = spec.flops(lowered.schedule.shape) if spec.flops else 0
    if not args.json:
        print(simulation_summary(sim, lowered.schedule.modeled_cycles, flops), end="")
    return simulation_dict(sim, lowered.schedule.modeled_cycles, flops), sim


def _cmd_verify(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, _, lowered, artifacts, result, log = _lowered(args)
    _write_dump(args.dump_dir, artifacts)
    if result is not None:
        print(summary(result), end="")
    return _verify(spec, lowered, log)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    _write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
    data, sim = _simulate_result(args, spec, arch, lowered, log)
    if args.json:
        print(json.dumps(data, indent=2))
    if args.html:
        _write_html(args, spec, result, sim, None, _top_k_sims(result, log))
    return 0


def _top_k_sims(result, log):  # type: ignore[no-untyped-def]
    from loom.pipeline import simulate_top_k

    return simulate_top_k(result, log) if result is not None else ()


def _cmd_run(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    _write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
    code, outcome = _verify_outcome(spec, lowered, log) if not args.json else (0, None)
    data, sim = _simulate_result(args, spec, arch, lowered, log)
    if args.json:
        print(
            json.dumps(
                {"schedule": json.loads(lowered.schedule.to_json()), "simulation": data}, indent=2
            )
        )
    elif args.dump_dir:
        print(
            f"artifacts   {len(artifacts)} files in {args.dump_dir} "
            "(TT-Lang kernel: kernel_ttlang.py)"
        )
    if args.html:
        _write_html(args, spec, result, sim, outcome, _top_k_sims(result, log))
    return code


def _cmd_candidates(args: argparse.Namespace) -> int:
    from loom.arch import load_arch
    from loom.clicompile import trace_cached
    from loom.dataflow import build_buffers
    from loom.mapping import enumerate_candidates
    from loom.pipeline import StageLog
    from loom.report import candidates_table
    from loom.report.artifacts import candidates_json

    arch = load_arch(args.arch)
    selection = (
        getattr(args, "kernel_name", None),
        tuple(getattr(args, "arg", None) or ()),
        getattr(args, "reference", None),
    )
    lazy = trace_cached(args.kernel, args.shape, _trace_cache(args), StageLog(), "", selection)
    assert lazy.traced is not None
    cs = enumerate_candidates(build_buffers(lazy.traced.program), arch)
    print(candidates_json(cs) if args.json else candidates_table(cs), end="")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "archs": _cmd_archs,
    "compile": _cmd_compile,
    "explain": _cmd_explain,
    "candidates": _cmd_candidates,
    "verify": _cmd_verify,
    "simulate": _cmd_simulate,
    "run": _cmd_run,
}


def _cmd_cuda(args: argparse.Namespace) -> int:
    """compile / verify / simulate / run / policies of a .cu file."""
    from loom.arch import load_arch
    from loom.cuda import load_annotations
    from loom.cuda_flow import CudaOptions, cuda_command

    defines = []
    for item in args.define:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise LoomError(f"--define {item!r}: write NAME=VALUE, e.g. --define N=1024.")
        defines.append((name, value))
    options = CudaOptions(
        arch=load_arch(args.arch),
        precision=args.precision,
        defines=tuple(defines),
        annotations=load_annotations(args.annotations),
        stop_after=args.stop_after,
    )
    if args.command == "policies":
        from loom.cuda_policies import format_ranking, rank_policies

        print(format_ranking(rank_policies(args.kernel, options), args.top), end="")
        return 0
    dump = getattr(args, "dump_dir", None)
    code, text, artifacts = cuda_command(args.command, args.kernel, options)
    _write_dump(dump, artifacts)
    print(text, end="")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    args = _build_parser().parse_args(argv)
    try:
        if str(getattr(args, "kernel", "") or "").endswith(".cu"):
            return _cmd_cuda(args)
        if args.command == "policies":
            raise LoomError(f"`loom policies` takes a .cu file; got {args.kernel!r}.")
        return COMMANDS[args.command](args)
    except LoomError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code if hasattr(err, "exit_code") else 2


if __name__ == "__main__":
    sys.exit(main())
