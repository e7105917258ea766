"""The command line: every command's arguments, one parser (argparse is the CLI's own)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import loom


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


def build_parser() -> argparse.ArgumentParser:
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
        "--no-cache",
        action="store_true",
        help="simulate every program again (ignore the simulations kept in the cache folder)",
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
        help="flash attention at 1/N of the paper's tokens (default 1, the paper's own: TTNN's "
        "default 32x32 chunks then take about 43 s of CPU, simulated in full like every "
        "row; 8 runs 64 times less simulated work)",
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
        "--realization",
        choices=["auto", "persistent", "looped"],
        default="auto",
        help="a full-extent dim a reduction runs over (x[tile_m, :]): auto (default) "
        "compiles it whole and in chunks (looped) and keeps the faster; persistent or "
        "looped compiles only that one",
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
