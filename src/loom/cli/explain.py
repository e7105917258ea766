"""`loom explain`, `candidates`, `archs` and `schema`: what Loom chose and why, what it
could have chosen, and what it reads."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

import loom
from loom.cli.cache import compile_from_args, selection, trace_cache
from loom.errors import UsageError

if TYPE_CHECKING:
    from loom.flows.cached import LazyKernel
    from loom.flows.helion import CompileResult


def cmd_explain(args: argparse.Namespace) -> int:
    kernel, result = compile_from_args(args)
    print_explain(kernel, result)
    return 0


def print_explain(kernel: LazyKernel, result: CompileResult) -> None:
    from loom.api.reporting import report_data
    from loom.report.explain_text import explain_sentences

    print("\nWhy:")
    for sentence in explain_sentences(report_data(kernel, result)):
        print(f"  - {sentence}")


def cmd_candidates(args: argparse.Namespace) -> int:
    from loom.arch import load_arch
    from loom.dataflow import build_buffers
    from loom.flows.cached import LazyKernel, trace_cached
    from loom.flows.stages import StageLog
    from loom.mapping import enumerate_candidates
    from loom.report import candidates_table
    from loom.report.artifacts import candidates_json

    arch = load_arch(args.arch or "wormhole_n150")
    lazy = LazyKernel.of_file(args.kernel, selection(args))
    trace_cached(lazy, args.shape, trace_cache(args), StageLog())
    assert lazy.traced is not None
    cs = enumerate_candidates(build_buffers(lazy.traced.program), arch)
    print(candidates_json(cs) if args.json else candidates_table(cs), end="")
    return 0


def cmd_archs(args: argparse.Namespace) -> int:
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


def cmd_schema(args: argparse.Namespace) -> int:
    from loom.arch.schema import json_schema
    from loom.ir.schedule_file import schedule_schema

    schema = schedule_schema() if args.which == "schedule" else json_schema()
    print(json.dumps(schema, indent=2, sort_keys=True))
    return 0
