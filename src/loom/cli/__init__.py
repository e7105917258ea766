"""`loom …`: the command line. One module per command family; this one parses, runs the
command inside the error boundary (every failure one paragraph, no traceback) and
exits."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from loom.cli.compile import cmd_compile, cmd_run, cmd_simulate, cmd_verify
from loom.cli.cuda import cmd_cuda
from loom.cli.evaluate import cmd_eval
from loom.cli.explain import cmd_archs, cmd_candidates, cmd_explain, cmd_schema
from loom.cli.outputs import check_outputs
from loom.cli.parser import build_parser
from loom.errors import LoomError, UsageError

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "archs": cmd_archs,
    "compile": cmd_compile,
    "explain": cmd_explain,
    "candidates": cmd_candidates,
    "verify": cmd_verify,
    "simulate": cmd_simulate,
    "run": cmd_run,
    "schema": cmd_schema,
    "eval": cmd_eval,
    "sweep": cmd_eval,
}


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
        check_outputs(args)
        if getattr(args, "resume", None) or str(getattr(args, "kernel", "") or "").endswith(".cu"):
            code = cmd_cuda(args)
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
    args = build_parser().parse_args(argv)
    return _dispatch(args)


if __name__ == "__main__":
    sys.exit(main())
