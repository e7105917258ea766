"""`loom compile|verify|simulate|run` of a .cu file, and `loom policies`: the affine CUDA
path through its own pipeline (`loom.flows.cuda`)."""

from __future__ import annotations

import argparse

from loom.cli.outputs import write_dump
from loom.errors import UsageError


def cmd_cuda(args: argparse.Namespace) -> int:
    """compile / verify / simulate / run / policies of a .cu file."""
    from loom.arch import load_arch
    from loom.cuda import load_annotations
    from loom.flows.cuda import CudaOptions, cuda_command

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
        from loom.flows.cuda_policies import format_ranking, rank_policies

        print(format_ranking(rank_policies(args.kernel, options), args.top), end="")
        return 0
    dump = getattr(args, "dump_dir", None)
    code, text, artifacts = cuda_command(args.command, args.kernel, options)
    write_dump(dump, artifacts)
    print(text, end="")
    return code


def _cmd_cuda_resume(args: argparse.Namespace) -> int:
    """Continue a .cu compilation from a checkpoint file (its source, defines, precision
    and annotations come from the file; edit the later stages' annotations there)."""
    from loom.arch import load_arch
    from loom.cuda.checkpoint import load_checkpoint
    from loom.flows.cuda import cuda_command, resume_options

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
    write_dump(getattr(args, "dump_dir", None), artifacts)
    print(text, end="")
    return code
