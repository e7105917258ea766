"""The CLI's compile: through `loom.compile`'s own path (`loom.api.compile_options`,
`loom.flows.cached.compile_cached`), with the Tile IR and compile-result cache under the
user's cache folder and progress on the terminal."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the stages are imported when a command runs, not when the CLI starts
    from loom.cli.console import StageProgress
    from loom.flows.cached import LazyKernel, Selection
    from loom.flows.helion import CompileResult
    from loom.flows.tracecache import TraceCache


def selection(args: argparse.Namespace) -> Selection:
    """--kernel NAME, --arg values and --reference, as given."""
    return (
        getattr(args, "kernel_name", None),
        tuple(getattr(args, "arg", None) or ()),
        getattr(args, "reference", None),
    )


def compile_from_args(args: argparse.Namespace) -> tuple[LazyKernel, CompileResult]:
    """The kernel and its CompileResult; the kernel's Helion module is imported only when
    needed (not at all on a warm compile)."""
    from loom.api import compile_options
    from loom.arch import load_arch
    from loom.flows.cached import LazyKernel, compile_cached

    options = compile_options(
        load_arch(args.arch or "wormhole_n150"),
        math_fidelity=args.math_fidelity,
        dtype=args.dtype,
        top_k=args.top_k,
        jobs=args.jobs,
        solver=args.solver,
        time_limit_s=args.time_limit,
        accumulate=args.accumulate,
        refine=args.refine,
        realization=args.realization,
    )
    listener = progress(args)
    lazy = LazyKernel.of_file(args.kernel, selection(args), listener)
    return lazy, compile_cached(lazy, args.shape, options, trace_cache(args), listener, args.dtype)


def trace_cache(args: argparse.Namespace) -> TraceCache | None:
    """The Tile IR cache under the user's cache folder ($LOOM_CACHE_DIR overrides it)."""
    if getattr(args, "no_cache", False):
        return None
    from loom.flows.tracecache import TraceCache

    folder = os.environ.get("LOOM_CACHE_DIR")
    if not folder:
        from platformdirs import user_cache_dir

        folder = str(Path(user_cache_dir("loom")) / "tile-ir")
    return TraceCache(Path(folder))


def progress(args: argparse.Namespace) -> StageProgress | None:
    """A spinner per stage on a terminal; nothing with --quiet, --json or when piped."""
    if getattr(args, "quiet", False) or getattr(args, "json", False) or not sys.stderr.isatty():
        return None
    from loom.cli.console import StageProgress

    return StageProgress()
