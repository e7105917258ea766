"""Bad input, tried as a careless user would: every case ends in one clear paragraph.

Each case runs `loom` in a scratch folder holding the user's files and asserts the exit
code (1 bad input, 2 misused command line), that the message names the cause, that no
traceback is printed, and that no file in the folder was created, changed or deleted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from loom.arch import builtin_path
from loom.cli import main

G = ["--shape", "M=64,N=64,K=64", "--jobs", "1"]
"""A small GEMM: cases that get as far as compiling stay fast."""


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    code: int
    cause: str
    """A fragment the message must contain: it names the cause."""
    setup: Callable[[Path], None] | None = None


def _arch(field: str, value: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        lines = builtin_path("wormhole_n150").read_text().splitlines()
        out = [f"{field}: {value}" if ln.startswith(f"{field}:") else ln for ln in lines]
        (folder / "arch.yaml").write_text("\n".join(out) + "\n")

    return make


def _schedule(edit: Callable[[dict], None]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    def make(folder: Path) -> None:
        data = json.loads((folder / "schedule.json").read_text())
        edit(data)
        (folder / "bad.json").write_text(json.dumps(data))

    return make


def _write(name: str, text: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)

    return make


def _kernel(name: str, replace: tuple[str, str] = ("", "")) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        text = (Path(__file__).parents[2] / "src/loom/kernels/gemm.py").read_text()
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text.replace(*replace) if replace[0] else text)

    return make


def _set(path: str, value: object) -> Callable[[dict], None]:  # type: ignore[type-arg]
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        *parents, last = path.split(".")
        for p in parents:
            data = data[p]
        data[last] = value

    return edit


RAISE_EXAMPLE = (
    "def example_inputs(shape: dict[str, int]) -> tuple[torch.Tensor, ...]:\n",
    "def example_inputs(shape: dict[str, int]) -> tuple[torch.Tensor, ...]:\n"
    "    raise RuntimeError('builder broke')\n",
)
RAISE_IMPORT = ("import helion\n", "import helion\nraise ImportError('no such thing')\n")
STRING_KEYS = ('SHAPE_KEYS = ("M", "N", "K")', 'SHAPE_KEYS = "MNK"')

CASES = [
    # -- usage: options out of range or missing (exit 2) --
    Case("time_limit_zero", ["compile", "gemm", *G, "--time-limit", "0"], 2, "--time-limit"),
    Case("time_limit_negative", ["compile", "gemm", *G, "--time-limit", "-5"], 2, "--time-limit"),
    Case("time_limit_nan", ["compile", "gemm", *G, "--time-limit", "nan"], 2, "--time-limit"),
    Case("time_limit_inf", ["compile", "gemm", *G, "--time-limit", "inf"], 2, "--time-limit"),
    Case("time_limit_word", ["compile", "gemm", "--time-limit", "ten"], 2, "--time-limit"),
    Case("jobs_negative", ["compile", "gemm", "--jobs", "-1"], 2, "--jobs"),
    Case("jobs_huge", ["compile", "gemm", "--jobs", "100000"], 2, "--jobs"),
    Case("top_k_zero", ["compile", "gemm", "--top-k", "0"], 2, "--top-k"),
    Case("unknown_solver", ["compile", "gemm", "--solver", "magic"], 2, "--solver"),
    Case("unknown_command", ["frobnicate"], 2, "invalid choice"),
    Case("candidates_bad_shape", ["candidates", "gemm", "--shape", "M=1,N"], 1, "KEY=POSITIVE_INT"),
    Case("run_time_limit_nan", ["run", "gemm", "--time-limit", "nan"], 2, "--time-limit"),
    Case("verify_without_kernel", ["verify"], 2, "name a kernel"),
    Case("archs_show_without_name", ["archs", "show"], 2, "needs an architecture name"),
    Case("schema_unknown", ["schema", "nothing"], 2, "invalid choice"),
    # -- shapes (exit 1) --
    Case("shape_superscript", ["compile", "gemm", "--shape", "M=²,N=64,K=64"], 1, "M=²"),
    Case(
        "shape_2_pow_40",
        ["compile", "gemm", "--shape", "M=1099511627776,N=64,K=64"],
        1,
        "exceeds the limit",
    ),
    Case(
        "shape_duplicate_key",
        ["compile", "gemm", "--shape", "M=64,M=128,N=64,K=64"],
        1,
        "gives M twice",
    ),
    Case("shape_missing_key", ["compile", "gemm", "--shape", "M=64,N=64"], 1, "missing: K"),
    Case(
        "shape_unknown_key", ["compile", "gemm", "--shape", "M=64,N=64,K=64,Q=1"], 1, "unknown: Q"
    ),
    Case("shape_zero", ["compile", "gemm", "--shape", "M=0,N=64,K=64"], 1, "M=0"),
    Case("shape_negative", ["compile", "gemm", "--shape", "M=-64,N=64,K=64"], 1, "M=-64"),
    Case("shape_float", ["compile", "gemm", "--shape", "M=64.0,N=64,K=64"], 1, "M=64.0"),
    Case("shape_hex", ["compile", "gemm", "--shape", "M=0x40,N=64,K=64"], 1, "M=0x40"),
    Case(
        "shape_empty_entry",
        ["compile", "gemm", "--shape", "M=64,,N=64,K=64"],
        1,
        "KEY=POSITIVE_INT",
    ),
    Case(
        "shape_not_tile_multiple",
        ["compile", "gemm", "--shape", "M=100,N=64,K=64"],
        1,
        "not a multiple of the 32x32 tile",
    ),
    Case("dtype_unknown", ["compile", "gemm", *G, "--dtype", "nonsense"], 1, "unknown data format"),
    # -- kernel files (exit 1) --
    Case("kernel_missing", ["compile", "nokernel.py"], 1, "neither a shipped kernel"),
    Case(
        "kernel_not_py",
        ["compile", "kernel.txt", *G],
        1,
        "does not end in .py",
        _kernel("kernel.txt"),
    ),
    Case(
        "kernel_is_folder",
        ["compile", "sub", *G],
        1,
        "neither a shipped kernel",
        _write("sub/x", ""),
    ),
    Case(
        "kernel_import_raises",
        ["compile", "k.py", *G],
        1,
        "could not import kernel file",
        _kernel("k.py", RAISE_IMPORT),
    ),
    Case(
        "kernel_builder_raises",
        ["compile", "k.py", *G],
        1,
        "example_inputs() of kernel file",
        _kernel("k.py", RAISE_EXAMPLE),
    ),
    Case(
        "kernel_without_helion_kernel",
        ["compile", "k.py", *G],
        1,
        "defines no @helion.kernel",
        _write("k.py", "SHAPE_KEYS = ('M',)\n"),
    ),
    Case(
        "kernel_shape_keys_string",
        ["compile", "k.py", *G],
        1,
        "SHAPE_KEYS",
        _kernel("k.py", STRING_KEYS),
    ),
    # -- architecture files (exit 1) --
    Case(
        "arch_unknown_name", ["compile", "gemm", "--arch", "nowhere_n9"], 1, "unknown architecture"
    ),
    Case("arch_missing_file", ["compile", "gemm", "--arch", "gone.yaml"], 1, "not found"),
    Case(
        "arch_clock_nan",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "clock_ghz must be a finite number",
        _arch("clock_ghz", ".nan"),
    ),
    Case(
        "arch_clock_huge",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "clock_ghz must be at most 10",
        _arch("clock_ghz", "1.0e+9"),
    ),
    Case(
        "arch_grid_string",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "grid_x must be an integer",
        _arch("grid_x", "eight"),
    ),
    Case(
        "arch_l1_negative",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "l1_usable_bytes must be a positive number",
        _arch("l1_usable_bytes", "-1"),
    ),
    Case(
        "arch_unknown_key",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "clock_mhz",
        _write("arch.yaml", builtin_path("wormhole_n150").read_text() + "clock_mhz: 1000\n"),
    ),
    Case(
        "arch_not_mapping",
        ["compile", "gemm", "--arch", "arch.yaml"],
        1,
        "must be a mapping",
        _write("arch.yaml", "- 1\n- 2\n"),
    ),
    Case(
        "arch_yaml_syntax",
        ["compile", "gemm", "--arch", "arch.yaml"],
        1,
        "YAML syntax error",
        _write("arch.yaml", "name: [unclosed\n"),
    ),
    Case(
        "arch_is_folder", ["compile", "gemm", "--arch", "sub"], 1, "not a file", _write("sub/x", "")
    ),
    Case(
        "arch_quoted_number",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "grid_x must be an integer (got '8')",
        _arch("grid_x", '"8"'),
    ),
    Case(
        "arch_grid_too_large",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "grid_x must be at most 256",
        _arch("grid_x", "1000"),
    ),
    Case(
        "arch_usable_l1_above_l1",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "l1_usable_bytes must be at most l1_bytes",
        _arch("l1_usable_bytes", "2000000"),
    ),
    Case(
        "arch_nested_unknown_key",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "noc.hop_cycle is not a field of Noc",
        _write("arch.yaml", "base: wormhole_n150\nname: wh\nnoc:\n  hop_cycle: 9\n"),
    ),
    Case(
        "arch_unknown_base",
        ["compile", "gemm", "--arch", "arch.yaml", *G],
        1,
        "is not a built-in description",
        _write("arch.yaml", "base: wormhole_n999\nname: wh\n"),
    ),
    # -- schedule files (exit 1) --
    Case("schedule_missing", ["verify", "--schedule", "gone.json"], 1, "does not exist"),
    Case(
        "schedule_not_json",
        ["verify", "--schedule", "bad.json"],
        1,
        "is not JSON",
        _write("bad.json", "{kernel: gemm"),
    ),
    Case(
        "schedule_not_object",
        ["verify", "--schedule", "bad.json"],
        1,
        "JSON object",
        _write("bad.json", "[1, 2]"),
    ),
    Case(
        "schedule_string_value",
        ["verify", "--schedule", "bad.json"],
        1,
        "block_sizes.tile_m",
        _schedule(_set("block_sizes.tile_m", "32")),
    ),
    Case(
        "schedule_tile_zero",
        ["verify", "--schedule", "bad.json"],
        1,
        "block_sizes.tile_m",
        _schedule(_set("block_sizes.tile_m", 0)),
    ),
    Case(
        "schedule_tile_negative",
        ["simulate", "--schedule", "bad.json"],
        1,
        "block_sizes.tile_m",
        _schedule(_set("block_sizes.tile_m", -32)),
    ),
    Case(
        "schedule_tile_48",
        ["simulate", "--schedule", "bad.json"],
        1,
        "block_sizes.tile_k = 48",
        _schedule(_set("block_sizes.tile_k", 48)),
    ),
    Case(
        "schedule_tile_not_divisor",
        ["simulate", "--schedule", "bad.json"],
        1,
        "does not divide the loop's extent 96",
        _schedule(_set("shape.K", 96)),
    ),
    Case(
        "schedule_other_kernel",
        ["verify", "gemm", "--schedule", "bad.json"],
        1,
        "is for kernel 'flash_decode', not 'gemm'",
        _schedule(_set("kernel", "flash_decode")),
    ),
    Case(
        "schedule_other_kernels_shape",
        ["verify", "--schedule", "bad.json"],
        1,
        "kernel flash_decode takes B, H, S, D",
        _schedule(_set("kernel", "flash_decode")),
    ),
    Case(
        "schedule_unknown_key",
        ["simulate", "--schedule", "bad.json"],
        1,
        "bogus: unknown key",
        _schedule(_set("bogus", 1)),
    ),
    Case(
        "schedule_shape_too_big",
        ["simulate", "--schedule", "bad.json"],
        1,
        "shape.M",
        _schedule(_set("shape.M", 2**40)),
    ),
    Case(
        "schedule_float_count",
        ["simulate", "--schedule", "bad.json"],
        1,
        "modeled_cycles",
        _schedule(_set("modeled_cycles", 1.5)),
    ),
    Case(
        "schedule_nan_number",
        ["simulate", "--schedule", "bad.json"],
        1,
        "modeled_us",
        _write("bad.json", ""),
    ),  # replaced below: NaN is not JSON, Python writes it anyway
    Case(
        "schedule_bad_fidelity",
        ["simulate", "--schedule", "bad.json"],
        1,
        "math_fidelity",
        _schedule(_set("math_fidelity", "HiFi9")),
    ),
    Case(
        "schedule_cores_disagree",
        ["simulate", "--schedule", "bad.json"],
        1,
        "mapping.cores",
        _schedule(_set("mapping.cores", [9, 9])),
    ),
    Case(
        "schedule_arch_mismatch",
        ["simulate", "--schedule", "schedule.json", "--arch", "blackhole_p150"],
        1,
        "targets 'wormhole_n150'",
    ),
    Case(
        "schedule_overflows_l1_in_simulate",
        ["simulate", "--schedule", "schedule.json", "--arch", "arch.yaml"],
        1,
        "bytes of L1 per core",
        _arch("l1_usable_bytes", "4096"),
    ),
    Case(
        "schedule_overflows_l1_in_run",
        ["run", "--schedule", "schedule.json", "--arch", "arch.yaml", "--json"],
        1,
        "bytes of L1 per core",
        _arch("l1_usable_bytes", "4096"),
    ),
    # -- outputs that would destroy a user's file, or cannot be written (exit 1) --
    Case(
        "dump_dir_current_folder", ["compile", "gemm", *G, "--dump-dir", "."], 1, "current folder"
    ),
    Case(
        "dump_dir_foreign_folder",
        ["compile", "gemm", *G, "--dump-dir", "mine"],
        1,
        "Loom did not create",
        _write("mine/a.txt", "mine"),
    ),
    Case(
        "dump_dir_holds_kernel",
        ["compile", "k/kern.py", *G, "--dump-dir", "k"],
        1,
        "holds the input",
        _kernel("k/kern.py"),
    ),
    Case("dump_dir_is_file", ["compile", "gemm", *G, "--dump-dir", "notes.md"], 1, "existing file"),
    Case(
        "dump_dir_under_file",
        ["compile", "gemm", *G, "--dump-dir", "notes.md/out"],
        1,
        "is a file, not a folder",
    ),
    Case(
        "dump_dir_unwritable",
        ["compile", "gemm", *G, "--dump-dir", "/proc/loom_out"],
        1,
        "cannot be written",
    ),
    Case(
        "trace_is_input_schedule",
        ["simulate", "--schedule", "schedule.json", "--trace", "schedule.json"],
        1,
        "also an input",
    ),
    Case("trace_exists", ["simulate", "gemm", *G, "--trace", "notes.md"], 1, "already exists"),
    Case(
        "trace_is_folder",
        ["simulate", "gemm", *G, "--trace", "sub"],
        1,
        "is a folder",
        _write("sub/x", ""),
    ),
    Case(
        "trace_unwritable",
        ["simulate", "gemm", *G, "--trace", "/proc/t.json"],
        1,
        "cannot be written",
    ),
    Case(
        "trace_inside_dump_dir",
        ["simulate", "gemm", *G, "--dump-dir", "out", "--trace", "out/t.json"],
        2,
        "inside --dump-dir",
    ),
    Case(
        "dump_dir_force_still_spares_input",
        ["verify", "--schedule", "d/schedule.json", "--dump-dir", "d", "--force"],
        1,
        "holds the input",
        _write("d/schedule.json", "{}"),
    ),
]


def _nan_schedule(folder: Path) -> None:
    text = (folder / "schedule.json").read_text()
    (folder / "bad.json").write_text(text.replace('"modeled_us": ', '"modeled_us": NaN, "x": '))


_SETUP_OVERRIDES = {"schedule_nan_number": _nan_schedule}


@pytest.fixture(scope="module")
def schedule_text() -> str:
    from loom.arch import load_arch
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.kernels.registry import resolve_kernel

    options = CompileOptions(load_arch("wormhole_n150"), {"M": 64, "N": 64, "K": 64}, jobs=1)
    return compile_kernel(resolve_kernel("gemm"), options).schedule.to_json()


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "dir"
        for p in sorted(folder.rglob("*"))
    }


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's usage errors
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, monkeypatch, capsys, schedule_text) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("the user's own notes\n")
    (tmp_path / "schedule.json").write_text(schedule_text)
    setup = _SETUP_OVERRIDES.get(case.name, case.setup)
    if setup is not None:
        setup(tmp_path)
    before = _snapshot(tmp_path)
    code, out, err = _run(case.argv, capsys)
    assert code == case.code, err
    assert "Traceback" not in err and "Traceback" not in out
    assert case.cause in err, err
    assert "internal error" not in err
    assert _snapshot(tmp_path) == before, "a file was created, changed or deleted"


def test_at_least_forty_cases_across_every_command() -> None:
    assert len(CASES) >= 40
    commands = {c.argv[0] for c in CASES}
    assert {"compile", "verify", "simulate", "run", "candidates", "archs", "schema"} <= commands
