"""`loom` command line: the only module that reads the environment or writes files."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import loom
from loom import outputs
from loom.errors import LoomError, UsageError


def _arch_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arch",
        help="built-in architecture name or a YAML file (default: wormhole_n150, or the "
        "schedule's architecture with --schedule)",
    )


def _kernel_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "kernel",
        nargs="?",
        help="gemm | flash_attention | flash_attention_causal | flash_decode | "
        "path/to/kernel.py | path/to/file.cu",
    )
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


def _int_in(low: int, high: int) -> Callable[[str], int]:
    """argparse type: an integer in [low, high] (a usage error otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low}..{high}")
        return value

    return parse


def _seconds(text: str) -> float:
    """argparse type: a finite, positive number of seconds, at most an hour."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds in (0, 3600]")
    return value


def _version() -> str:
    """The one version, as `loom.__version__` reads it from the package metadata."""
    return str(loom.__version__)


def _debug_arg(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--debug",
        action="store_true",
        default=default,
        help="show the Python traceback of an internal error",
    )


def _force_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --dump-dir folder or --trace file",
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loom",
        description="Tuning-free compiler of Helion tile kernels for Tenstorrent chips.",
    )
    parser.add_argument("--version", action="version", version=f"loom {_version()}")
    _debug_arg(parser, False)
    sub = parser.add_subparsers(dest="command", required=True)

    archs = sub.add_parser("archs", help="list the built-in architectures, or show one")
    archs.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    archs.add_argument("name", nargs="?", help="architecture name or YAML file (for show)")

    compile_ = sub.add_parser("compile", help="compile a kernel and print the chosen schedule")
    _kernel_args(compile_)
    _solver_args(compile_)
    compile_.add_argument("--dump-dir", help="write every stage's artifact into this folder")
    compile_.add_argument("--json", action="store_true", help="print the Schedule as JSON")
    _force_arg(compile_)
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
        _force_arg(cmd)
        if name in ("simulate", "run"):
            cmd.add_argument("--trace", help="write a Chrome/Perfetto trace JSON here")
            _report_args(cmd)
        cmd.add_argument("--json", action="store_true", help="print the results as JSON")

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
    _eval_parsers(sub)

    schema = sub.add_parser("schema", help="print the JSON schema of a file Loom reads")
    schema.add_argument("which", choices=["schedule", "arch"])
    for cmd in sub.choices.values():
        _debug_arg(cmd, argparse.SUPPRESS)
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
        "--no-cache",
        action="store_true",
        help="trace and solve again (ignore the cached Tile IR and compile result)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on the terminal")


def _cuda_args(parser: argparse.ArgumentParser) -> None:
    """Options of the affine CUDA path (a kernel given as a .cu file)."""
    parser.add_argument("--define", action="append", default=[], help=".cu only: NAME=VALUE")
    parser.add_argument("--annotations", help=".cu only: policy annotations (YAML)")
    parser.add_argument(
        "--stop-after",
        choices=["tileplan", "tileflow", "task", "physical"],
        help=".cu only: print the checkpoints up to this one and stop",
    )
    parser.add_argument(
        "--precision",
        choices=["bf16", "fp32"],
        default="fp32",
        help=".cu only: element type of the arrays",
    )
    parser.add_argument(
        "--resume",
        metavar="CHECKPOINT",
        help=".cu only: continue from a checkpoint written by --stop-after with --dump-dir",
    )


def _sweep_args(parser: argparse.ArgumentParser, out: str) -> None:
    parser.add_argument("--out", default=out, help=f"results folder (default: {out}/)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="Ray workers (default: one per core); 1 runs in this process without Ray",
    )
    parser.add_argument("--address", default="", help="an existing Ray cluster to run on")
    parser.add_argument("--top-k", type=int, default=5, help="Loom and TileLoom candidates kept")
    parser.add_argument("--math-fidelity", choices=["LoFi", "HiFi2", "HiFi3", "HiFi4"], default="")
    parser.add_argument(
        "--no-neighbours", action="store_true", help="skip GEMM's 27-neighbour block sizes"
    )
    parser.add_argument(
        "--html",
        dest="pages",
        action="store_true",
        help="also write a report page per case and an index (OUT/pages/index.html); "
        "compiles each case through the cache and simulates its pick once more, traced",
    )


def _eval_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ev = sub.add_parser(
        "eval", help="the paper's evaluation in the simulator: Loom vs every baseline"
    )
    ev.add_argument("--quick", action="store_true", help="a subset that runs in minutes")
    ev.add_argument("--kernels", default="", help="comma-separated subset of the kernels")
    ev.add_argument("--archs", default="", help="comma-separated subset of the architectures")
    ev.add_argument(
        "--fa-scale",
        type=int,
        default=None,
        metavar="N",
        help="flash attention at 1/N of the paper's tokens (default 1, the paper's own: about "
        "7 minutes of CPU per TTNN simulation; 8 runs 64 times less simulated work)",
    )
    _sweep_args(ev, "eval-results")
    sw = sub.add_parser("sweep", help="Loom vs the baselines over shapes x architectures")
    sw.add_argument("kernel", help="gemm | flash_attention | flash_attention_causal | flash_decode")
    sw.add_argument("--shapes", nargs="+", required=True, help="e.g. M=256,N=256,K=512 ...")
    sw.add_argument("--archs", default="wormhole_n150", help="comma-separated architectures")
    _sweep_args(sw, "sweep-results")


def _solver_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs", type=_int_in(0, 1024), default=0, help="parallel solves (default: all cores)"
    )
    parser.add_argument(
        "--top-k", type=_int_in(1, 1000), default=5, help="candidates kept in the ranking"
    )
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
        "--accumulate",
        choices=["strict", "output"],
        default="strict",
        help="accumulation policy: strict (default) keeps every accumulator in the format "
        "the kernel gives it; output also lets a matmul accumulator live in the output's "
        "block in the output's format (bf16 partial sums, as TTNN with "
        "fp32_dest_acc_en=False): less precise, less L1; the model picks per schedule",
    )
    parser.add_argument(
        "--dtype",
        default="",
        help="data formats: a default for every tensor argument (bf16, fp32, bfp8, bfp4 or "
        "TTNN's bfloat8_b...), then arg=format overrides and acc=format for the "
        "accumulator, e.g. bfp8,c=bf16,acc=fp32",
    )
    parser.add_argument(
        "--time-limit",
        type=_seconds,
        default=10.0,
        help="per-candidate CP-SAT limit in deterministic seconds",
    )


def _cmd_archs(args: argparse.Namespace) -> int:
    from loom.arch import describe_arch

    if args.action == "show":
        if not args.name:
            raise UsageError("`loom archs show` needs an architecture name; see `loom archs`.")
        print(describe_arch(loom.load_arch(args.name)), end="")
        return 0
    for name in loom.archs():
        arch = loom.load_arch(name)
        print(
            f"{name:24} {arch.grid_x}x{arch.grid_y} cores @ {arch.clock_ghz} GHz  "
            f"{arch.description}"
        )
    return 0


def _write_dump(dump_dir: str | None, artifacts: dict[str, str]) -> None:
    """Write all artifacts at once, replacing the folder only when everything succeeded."""
    if dump_dir:
        outputs.write_dump(dump_dir, artifacts)


def _inputs(args: argparse.Namespace) -> list[str]:
    """The user's files this command reads (outputs must never replace them)."""
    found = []
    for name in ("kernel", "schedule", "arch"):
        value = getattr(args, name, None)
        if value and Path(value).exists():
            found.append(str(value))
    return found


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse unsafe output paths before any work starts."""
    force = getattr(args, "force", False)
    if getattr(args, "dump_dir", None):
        outputs.check_dump_dir(args.dump_dir, _inputs(args), force)
    for option in ("trace", "html"):
        path = getattr(args, option, None)
        if not path:
            continue
        outputs.check_output_file(path, f"--{option}", _inputs(args), force)
        dump = getattr(args, "dump_dir", None)
        if dump and outputs.inside(Path(path), Path(dump)):
            raise UsageError(
                f"--{option} {path!r} lies inside --dump-dir {dump!r}, which is replaced as "
                f"a whole; put the {option} file elsewhere."
            )


def _load_kernel(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from loom.arch import load_arch
    from loom.kernels.registry import parse_shape, resolve_kernel

    arch = load_arch(args.arch or "wormhole_n150")
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

    arch = load_arch(args.arch or "wormhole_n150")

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
            accumulate=args.accumulate,
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


def _write_atomic(path: Path, data: str | bytes) -> None:
    """Write through a temporary file beside `path`, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
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
    artifacts = compile_artifacts(result) if args.dump_dir else {}
    _write_dump(args.dump_dir, artifacts)
    if args.json:
        print(result.schedule.to_json(), end="")
    else:
        print(summary(result), end="")
        _print_reused(kernel)
        if args.dump_dir:
            print(f"artifacts   {len(artifacts)} files in {args.dump_dir}")
        if args.explain:
            _print_explain(kernel, result)
    if args.html:
        _write_html(args, kernel, result)
    return 0


def _print_reused(kernel: Any) -> None:
    """Say so when the compile result came from the cache (the compile time shown is the
    original one)."""
    if getattr(kernel, "reused", False):
        print("cache       compile result reused from the cache (--no-cache compiles again)")


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
        arch = load_arch(args.arch or schedule.arch)
        spec = resolve_kernel(args.kernel or schedule.kernel)
        log = StageLog()
        lowered = load_schedule(spec, schedule, arch, log)
        artifacts = {**log.artifacts, "schedule.json": schedule.to_json()}
        return spec, arch, lowered, artifacts, None, log
    if not args.kernel:
        raise UsageError("name a kernel (or pass --schedule schedule.json); see `loom --help`.")
    spec, result = _compile(args)
    artifacts = compile_artifacts(result) if args.dump_dir else {}
    return spec, result.arch, result.lowered, artifacts, result, result.log


def _verify(spec, lowered, log, arch, quiet: bool = False) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Verify on tt-lang-sim; print the verdict unless `quiet`; return it as JSON data."""
    data: dict[str, Any] = _verify_outcome(spec, lowered, log, arch, quiet)[0]
    return data


def _verify_outcome(spec, lowered, log, arch, quiet: bool = False):  # type: ignore[no-untyped-def]
    """(JSON-ready verdict, VerifyResult or None when tt-lang-sim rejected the kernel)."""
    from loom.errors import VerificationError
    from loom.pipeline import verify_lowered

    try:
        outcome = verify_lowered(spec, lowered, log, arch)
    except VerificationError as err:
        if not quiet:
            raise
        return {"passed": False, "message": str(err)}, None
    if not quiet:
        verdict = "PASS" if outcome.passed else "FAIL"
        if spec.file is not None:
            print(f"reference   {spec.file.reference_name}")
            for check in outcome.outputs:
                print(
                    f"output      {check.name}: {'PASS' if check.passed else 'FAIL'} max abs "
                    f"error {check.max_abs_error:.3e}, max rel error {check.max_rel_error:.3e} "
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
    return {
        "passed": outcome.passed,
        "max_abs_error": outcome.max_abs_error,
        "max_rel_error": outcome.max_rel_error,
        "tolerance": outcome.tolerance,
        "format_note": outcome.format_note,
        "reference": spec.file.reference_name if spec.file is not None else "reference()",
        "outputs": [
            {
                "name": c.name,
                "passed": c.passed,
                "max_abs_error": c.max_abs_error,
                "max_rel_error": c.max_rel_error,
                "tolerance": c.tolerance,
            }
            for c in outcome.outputs
        ],
        "timings": {"simulator_wall_seconds": outcome.wall_seconds},
    }, outcome


def _simulate_result(args: argparse.Namespace, spec, arch, lowered, log):  # type: ignore[no-untyped-def]
    """(JSON-ready figures, SimResult); traces when --trace or --html asks for it."""
    from loom.pipeline import simulate_lowered
    from loom.report import simulation_dict, simulation_summary
    from loom.sim import trace_json

    trace = bool(args.trace or getattr(args, "html", None))
    sim = simulate_lowered(lowered, arch, log, trace=trace)
    flops = spec.flops(lowered.schedule.shape) if spec.flops else 0
    modeled = round(lowered.modeled_cycles(arch))  # every launch, barriers included
    if not args.json:
        print(simulation_summary(sim, modeled, flops), end="")
    if args.trace:
        outputs.write_file(args.trace, trace_json(sim.trace_events))
    data = simulation_dict(sim, modeled, flops)
    # wall-clock figures differ between identical runs: keep them apart from the results
    data["timings"] = {"events_per_second": data.pop("events_per_second", 0)}
    return data, sim


def _cmd_verify(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    _write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
        _print_reused(spec)
    data = _verify(spec, lowered, log, arch, quiet=args.json)
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    return 0 if data["passed"] else 1


def _cmd_simulate(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    _write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
        _print_reused(spec)
    data, sim = _simulate_result(args, spec, arch, lowered, log)
    if args.json:
        print(json.dumps(data, indent=2))
    if args.html:
        _write_html(args, spec, result, sim, None, _top_k_sims(result, log))
    return 0


def _top_k_sims(result: Any, log: Any) -> tuple[tuple[str, float], ...]:
    from loom.pipeline import simulate_top_k

    return simulate_top_k(result, log) if result is not None else ()


def _cmd_run(args: argparse.Namespace) -> int:
    from loom.report import summary

    spec, arch, lowered, artifacts, result, log = _lowered(args)
    _write_dump(args.dump_dir, artifacts)
    if result is not None and not args.json:
        print(summary(result), end="")
        _print_reused(spec)
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


def _cmd_candidates(args: argparse.Namespace) -> int:
    from loom.arch import load_arch
    from loom.clicompile import trace_cached
    from loom.dataflow import build_buffers
    from loom.mapping import enumerate_candidates
    from loom.pipeline import StageLog
    from loom.report import candidates_table
    from loom.report.artifacts import candidates_json

    arch = load_arch(args.arch or "wormhole_n150")
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


def _cmd_schema(args: argparse.Namespace) -> int:
    from loom.arch.schema import json_schema
    from loom.ir.schedule_file import schedule_schema

    schema = schedule_schema() if args.which == "schedule" else json_schema()
    print(json.dumps(schema, indent=2, sort_keys=True))
    return 0


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
    from loom.eval.cases import ARCHS, FA_SCALE, KERNELS, case, paper_cases, quick_cases
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
        chosen = quick_cases(archs) if args.quick else paper_cases(kernels, archs, scale)
        return [c for c in chosen if c.kernel in kernels]
    if args.kernel not in KERNELS:
        raise UsageError(
            f"`loom sweep` runs the shipped kernels ({', '.join(KERNELS)}), not "
            f"{args.kernel!r}; baselines exist only for those."
        )
    archs = _split(args.archs, tuple(list_archs()), "architecture")
    spec = resolve_kernel(args.kernel)
    shapes = [parse_shape(text, spec) for text in args.shapes]
    for name in archs:
        load_arch(name)
    return [case(args.kernel, a, s) for a in archs for s in shapes]


def _cmd_eval(args: argparse.Namespace) -> int:
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
    options = EvalOptions(
        top_k=args.top_k, math_fidelity=args.math_fidelity, neighbours=not args.no_neighbours
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
            _write_atomic(results, rows_to_csv(rows))
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
    from loom.arch import load_arch
    from loom.clicompile import compile_cached, report_data
    from loom.pipeline import CompileOptions, simulate_lowered
    from loom.report.eval_pages import case_page, page_name, render_eval_index, simulated_top_k
    from loom.report.html import render_report

    pages = []
    for case in sorted(cases):
        arch = load_arch(case.arch)
        mine = [r for r in rows if r.case_key == case.key]

        def options(shape: dict[str, int], arch=arch) -> CompileOptions:  # type: ignore[no-untyped-def]
            fidelity = args.math_fidelity or arch.matmul.default_fidelity
            return CompileOptions(arch=arch, shape=shape, math_fidelity=fidelity, jobs=1,
                                  top_k=args.top_k)  # fmt: skip

        try:
            kernel, result = compile_cached(
                case.kernel, case.shape_text, options, _trace_cache(args), None
            )
        except LoomError as err:
            print(f"page        {case.kernel} {case.arch} {case.shape_text}: not written ({err})")
            continue
        sim = simulate_lowered(result.lowered, arch, result.log, trace=True)
        data = report_data(kernel, result, sim, None, "", simulated_top_k(mine))
        _write_atomic(folder / page_name(case.kernel, case.arch, case.shape_text),
                      render_report(data))  # fmt: skip
        pages.append(case_page(data, case.shape_text, mine))
    _write_atomic(folder / "index.html", render_eval_index(tuple(pages)))
    print(f"pages       {len(pages)} case reports, index in {folder / 'index.html'}")


def _eval_report(out: Path, rows: list) -> None:  # type: ignore[type-arg]
    from loom.report.eval_plots import eval_figures
    from loom.report.eval_tables import losses, table2, table3

    text = table2(rows) + "\n" + table3(rows)
    print(text, end="")
    _write_atomic(out / "tables.txt", text + "\n" + losses(rows))
    for name, data in eval_figures(rows).items():
        _write_atomic(out / name, data)
    print(f"results.csv, tables.txt and figures in {out}/")


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "archs": _cmd_archs,
    "compile": _cmd_compile,
    "explain": _cmd_explain,
    "candidates": _cmd_candidates,
    "verify": _cmd_verify,
    "simulate": _cmd_simulate,
    "run": _cmd_run,
    "schema": _cmd_schema,
    "eval": _cmd_eval,
    "sweep": _cmd_eval,
}


def _cmd_cuda(args: argparse.Namespace) -> int:
    """compile / verify / simulate / run / policies of a .cu file."""
    from loom.arch import load_arch
    from loom.cuda import load_annotations
    from loom.cuda_flow import CudaOptions, cuda_command

    if getattr(args, "resume", None):
        return _cmd_cuda_resume(args)
    defines = []
    for item in args.define:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--define {item!r}: write NAME=VALUE, e.g. --define N=1024.")
        defines.append((name, value))
    options = CudaOptions(
        arch=load_arch(args.arch or "wormhole_n150"),
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


def _cmd_cuda_resume(args: argparse.Namespace) -> int:
    """Continue a .cu compilation from a checkpoint file (its source, defines, precision
    and annotations come from the file; edit the later stages' annotations there)."""
    from loom.arch import load_arch
    from loom.cuda.checkpoint import load_checkpoint
    from loom.cuda_flow import cuda_command, resume_options

    ck = load_checkpoint(args.resume)
    if args.kernel and args.kernel != ck.source:
        raise UsageError(
            f"--resume {args.resume!r} continues {ck.source!r}, not {args.kernel!r}; drop the "
            "kernel argument or pass the checkpoint of that file."
        )
    if args.define or args.annotations:
        raise UsageError(
            "--resume takes its defines and annotations from the checkpoint; drop --define "
            "and --annotations and edit the checkpoint's later-stage annotations instead."
        )
    options = resume_options(ck, load_arch(args.arch or ck.arch), args.stop_after)
    code, text, artifacts = cuda_command(args.command, ck.source, options, resumed=ck)
    _write_dump(getattr(args, "dump_dir", None), artifacts)
    print(text, end="")
    return code


def _stdout_closed() -> int:
    """The reader of stdout went away (`loom ... | head`): stop quietly, like `cat`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a tool stopped by a closed pipe


def _dispatch(args: argparse.Namespace) -> int:
    """Run one command inside the error boundary: every failure becomes one paragraph."""
    try:
        _check_outputs(args)
        if getattr(args, "resume", None) or str(getattr(args, "kernel", "") or "").endswith(".cu"):
            code = _cmd_cuda(args)
        elif args.command in ("compile", "explain") and not args.kernel:
            raise UsageError(f"`loom {args.command}` needs a kernel (a name, a .py or a .cu file).")
        elif args.command == "policies":
            raise UsageError(f"`loom policies` takes a .cu file; got {args.kernel!r}.")
        else:
            code = COMMANDS[args.command](args)
        sys.stdout.flush()
        return code
    except LoomError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        print("error: interrupted; no output was written.", file=sys.stderr)
        return 130
    except OSError as err:
        where = f" {err.filename!r}" if err.filename else ""
        print(
            f"error: cannot access{where}: {err.strerror or err}; check the path and its "
            "permissions.",
            file=sys.stderr,
        )
        return 1
    except MemoryError:
        print("error: out of memory; use a smaller shape.", file=sys.stderr)
        return 1
    except Exception as err:
        if getattr(args, "debug", False):
            traceback.print_exc()
        detail = str(err).splitlines()[0] if str(err) else ""
        print(
            f"internal error: {type(err).__name__}{': ' + detail if detail else ''} (a bug "
            "in Loom, not in your input); rerun with --debug for the traceback and report it.",
            file=sys.stderr,
        )
        return 3


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    args = _build_parser().parse_args(argv)
    return _dispatch(args)


if __name__ == "__main__":
    sys.exit(main())
