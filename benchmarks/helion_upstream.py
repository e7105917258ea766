"""Helion's own examples, as a new user would try them: one verdict per kernel.

Each file of an examples folder (a checkout of pytorch/helion's `examples/`, not part of
Loom) is imported as `loom verify FILE` imports it; its `check()`/`test()`/`main()` is
run at small sizes (the table below, mirroring each file's own calls) with every
`@helion.kernel` of the file replaced by a probe that records the arguments of its
first call (and runs the kernel in Helion's eager interpret mode so the host code goes
on), and `run_example` by a runner that calls the kernels only. Each recorded kernel is
then compiled and verified on tt-lang-sim with those arguments (`loom.compile(kernel,
*args).verify(inputs=args)`, the CLI's path), and one line printed per kernel:

    PASS | FAIL (max rel error) | refused: <first line of Loom's error> | CRASH: <exception>

Files that cannot be imported (they import Triton, which Loom does not need) list each
kernel they define as refused.

    OMP_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python benchmarks/helion_upstream.py \
        path/to/helion/examples [--only FILE ...]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import inspect
import io
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch

F16 = torch.float16


def _call(name: str, *args: object, **kwargs: object) -> Callable[[ModuleType], None]:
    def run(module: ModuleType) -> None:
        getattr(module, name)(*args, **kwargs)

    run.__name__ = f"{name}{args}"
    return run


def _concatenate(m: ModuleType) -> None:
    x, y = torch.randn(64, 128), torch.randn(64, 96)
    m.run_example({"simple": m.concat2d_dim1_simple, "masked": m.concat2d_dim1}, None, (x, y))


def _cross_entropy(m: ModuleType) -> None:
    logits = torch.randn(64, 256)
    labels = torch.randint(0, 256, (64,), dtype=torch.int64)
    m.run_example(m.cross_entropy, None, (logits, labels))


def _layer_norm(m: ModuleType) -> None:
    x = -2.3 + 0.5 * torch.randn(64, 256, dtype=F16)
    w, b = torch.randn(256, dtype=F16), torch.randn(256, dtype=F16)
    m.run_example(m.layer_norm, None, (x, [256], w, b, 1e-4))


def _grpo_loss(m: ModuleType) -> None:
    m.test_grpo_loss(B=2, L=64, V=256)


SMALL: dict[str, list[Callable[[ModuleType], None]]] = {
    "add.py": [_call("check", 64, 64)],
    "attention.py": [_call("test", 1, 2, 128, 64, F16, device="cpu")],
    "batch_softmax.py": [_call("check", 2, 64, 128)],
    "bf16xint16_gemm.py": [_call("check", 64, 64, 64)],
    "bmm.py": [_call("check", 2, 64, 64, 64)],
    "broadcast_matmul.py": [_call("check", 2, 64, 64, 64)],
    "concatenate.py": [_concatenate],
    "cross_entropy.py": [_cross_entropy],
    "epilogue_subtiling.py": [_call("check", 64, 64, 64)],
    "exp.py": [_call("check", 4096)],
    "flex_attention.py": [_call("test", 1, 2, 128, 64, F16, device="cpu")],
    "fp8_attention.py": [_call("check", 1, 2, 128, 64)],
    "fp8_gemm.py": [_call("check", 64, 64, 64)],
    "fp8_matmul.py": [_call("check", 64, 64, 64)],
    "fused_linear_jsd.py": [_call("check", 64, 64, 256)],
    "geglu.py": [
        _call("check_geglu_kernel", (2, 32, 64)),
        _call("check_geglu_mlp", 2, 32, 64, 128),
    ],
    "swiglu.py": [
        _call("check_swiglu_kernel", (2, 32, 64)),
        _call("check_swiglu_mlp", 2, 32, 64, 128),
    ],
    "gdn_fwd_h.py": [_call("test", 1, 2, 128, 64, 32, 64)],
    "int4_gemm.py": [_call("check", 64, 128, 64)],
    "jsd.py": [_call("check_jsd_kernel", 2, 32, 256)],
    "kl_div.py": [_call("check_kl_div_kernel", 2, 32, 256, "batchmean", False, 1e-10)],
    "layer_norm.py": [_layer_norm],
    "grpo_loss.py": [_grpo_loss],
    "long_sum.py": [_call("check", 4, 4096)],
    "low_mem_dropout.py": [_call("check", 0.25, 4096)],
    "mamba2_chunk_scan.py": [_call("test", "zzzzzzz", 1, 2, 1, 128, 64, 64, 64)],
    "mamba2_chunk_state.py": [_call("test", "uuuu", 1, 2, 1, 128, 64, 64, 64)],
    "matmul.py": [_call("check", 64, 64, 64)],
    "matmul_layernorm.py": [_call("check", 32, 64, 128)],
    "matmul_split_k.py": [_call("check", 64, 1024, 64)],
    "moe_matmul_ogs.py": [_call("check", 64, 64, 64, 4)],
    "rms_norm.py": [_call("check", 64, 256)],
    "se_block.py": [_call("check", 64, 64)],
    "softmax.py": [_call("check", 64, 256)],
    "split_k_barrier.py": [_call("check", 32, 1024, 32)],
    "squeeze_and_excitation_net.py": [_call("check", 64, 64, 64)],
    "sum.py": [_call("check", 64, 256)],
    "welford.py": [_call("check", 64, 256)],
    "xsa.py": [_call("check", 1, 2, 128, 64, F16)],
}
"""Each file's own example calls at small sizes (default: its `main()`)."""
SKIP = {"__init__.py", "aot_compile_example.py", "aot_example.py"}
"""Not kernel examples (ahead-of-time compilation drivers)."""


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


RECORD_TIMEOUT = 120
"""Seconds for a file's example calls (eager torch at the table's sizes)."""


class _Stop(Exception):
    """A probe could not run its kernel eagerly: stop this example call."""


class _Probe:
    """Stands in for a `@helion.kernel`: records the first call's arguments."""

    def __init__(self, kernel: Any, seen: dict[str, tuple[Any, tuple[Any, ...]]]) -> None:
        self.kernel = kernel
        self.seen = seen
        self.__name__ = kernel.fn.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import helion

        bound = inspect.signature(self.kernel.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        full = tuple(a.detach().clone() if isinstance(a, torch.Tensor) else a for a in bound.args)
        self.seen.setdefault(self.__name__, (self.kernel, full))
        settings = {"static_shapes": getattr(self.kernel.settings, "static_shapes", True)}
        eager = helion.kernel(self.kernel.fn, ref_mode=helion.RefMode.EAGER, **settings)
        try:
            return eager(*args, **kwargs)
        except Exception as err:
            raise _Stop(str(err)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel, name)


def _run_example(fns: Any, baseline: Any, args: tuple[Any, ...], **kw: Any) -> None:
    for fn in fns.values() if isinstance(fns, dict) else [fns]:
        try:
            out = fn(*args)
            if kw.get("bwd") and isinstance(out, torch.Tensor) and out.requires_grad:
                out.float().sum().backward()
        except _Stop:
            pass


def _import(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"helion_upstream_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _defined_kernels(path: Path) -> list[tuple[str, int]]:
    """(name, line) of each `@helion.kernel` function, from the source."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                text = ast.unparse(deco)
                if text.startswith(("helion.kernel", "kernel")):
                    found.append((node.name, node.lineno))
    return found


def record(path: Path) -> tuple[dict[str, tuple[Any, tuple[Any, ...]]], str]:
    """The kernels the file's examples call, with their arguments; or why none."""
    import helion
    import helion._testing

    helion._testing.DEVICE = torch.device("cpu")
    try:
        module = _import(path)
    except Exception as err:
        return {}, f"the file cannot be imported ({type(err).__name__}: {err})"
    seen: dict[str, tuple[Any, tuple[Any, ...]]] = {}
    module.DEVICE = torch.device("cpu")
    module.run_example = _run_example
    for name, value in list(vars(module).items()):
        if isinstance(value, helion.Kernel):
            setattr(module, name, _Probe(value, seen))
    note = ""
    signal.signal(signal.SIGALRM, _alarm)
    for call in SMALL.get(path.name, [_call("main")]):
        signal.alarm(RECORD_TIMEOUT)
        try:
            quiet = io.StringIO()
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                call(module)
        except _Stop:
            pass
        except _Timeout:
            note = f"{call.__name__} ran over {RECORD_TIMEOUT} s in eager torch"
        except Exception as err:
            note = f"{call.__name__} failed: {type(err).__name__}: {str(err)[:160]}"
        finally:
            signal.alarm(0)
    return seen, note


def verify(kernel: Any, args: tuple[Any, ...], timeout: int) -> str:
    import loom
    from loom.errors import LoomError

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        ck = loom.compile(kernel, *args, jobs=1, top_k=1, time_limit_s=2.0)
        result = ck.verify(inputs=args)
        if result.passed:
            return "PASS"
        return f"FAIL (max rel error {result.max_rel_error:.3g})"
    except LoomError as err:
        first = str(err).strip().splitlines()[0]
        return "refused: " + first.split("; supported inside hl.tile loops")[0][:240]
    except _Timeout:
        return f"TIMEOUT after {timeout} s"
    except Exception as err:
        where = traceback.extract_tb(err.__traceback__)[-1]
        return f"CRASH: {type(err).__name__}: {str(err)[:200]} ({where.filename}:{where.lineno})"
    finally:
        signal.alarm(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a copy of pytorch/helion's examples/")
    parser.add_argument("--only", nargs="*", default=[], help="file names to run")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per kernel")
    opts = parser.parse_args()
    torch.manual_seed(0)
    counts: dict[str, int] = {}
    files = sorted(p for p in opts.folder.glob("*.py") if p.name not in SKIP)
    for path in files:
        if opts.only and path.name not in opts.only and path.stem not in opts.only:
            continue
        seen, note = record(path)
        if not seen:
            why = note or "its examples call no kernel at these sizes"
            for name, line in _defined_kernels(path):
                verdict = f"refused: {why}"
                counts["refused"] = counts.get("refused", 0) + 1
                print(f"{path.name}:{line} {name}: {verdict}", flush=True)
            continue
        for name, (kernel, args) in seen.items():
            verdict = verify(kernel, args, opts.timeout)
            counts[verdict.split(":")[0].split(" ")[0]] = (
                counts.get(verdict.split(":")[0].split(" ")[0], 0) + 1
            )
            print(f"{path.name} {name}: {verdict}", flush=True)
    total = sum(counts.values())
    print(f"total {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
