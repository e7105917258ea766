"""A corpus of malformed and unsupported Helion files: every `loom` command ends with one
`error:` paragraph naming the construct (with file:line where there is one) and the fix,
a non-zero exit and no traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loom.cli import main

CORPUS = Path(__file__).parent / "corpus"

CASES = {
    "atomic_split_k": (
        ["--arg", "a=64x64:bf16", "--arg", "b=64x64:bf16"],
        r"atomic_split_k\.py:13: Loom cannot compile `hl\.atomic_add into out, which the "
        r"kernel does not create with torch\.zeros`.*must start at zero",
    ),
    "argmax": (
        ["--arg", "x=64x64"],
        r"argmax\.py:11: Loom cannot compile `argmax over a dim tiled by the grid`.*inner "
        r"loop.*\+ tile_n\.begin",
    ),
    "argmax_local": (
        ["--arg", "x=64x64"],
        r"argmax_local\.py:12: Loom cannot compile `the argmax of a tile of a looped dim used "
        r"without its tile's begin`.*\+ tile_n\.begin",
    ),
    "integer_input": (
        [],
        r"integer_input\.py:9: .*`storing into the int64 tensor x, which the kernel reads`",
    ),
    "int8_input": (
        [],
        r"int8_input\.py:10: .*`storing into the torch\.int8 tensor out`.*int32 tensor",
    ),
    "int_matmul": (
        ["--arg", "a=64x64:int32", "--arg", "b=64x64:int32"],
        r"int_matmul\.py:12: .*`a matmul of int32 tiles`.*\.float\(\)",
    ),
    "int_sum": (
        [],
        r"int_sum\.py:11: .*`sum of an int32 tile into torch\.int64`.*dtype=torch\.int32",
    ),
    "fp8_input": (
        [],
        r"fp8_input\.py:10: .*`tensor x of dtype torch\.float8_e4m3fn`.*tt-lang-sim 1\.1\.6 "
        r"cannot compute on IEEE-style fp8 tiles.*--dtype bfp8",
    ),
    "batch_row_index": (
        ["--arg", "x=2x64x64"],
        r"batch_row_index\.py:11: the store of 'out' starts at element .*core_x.*, not on a "
        r"32-element tile edge.*\[b, m, 1\]",
    ),
    "seeded_rand": (
        ["--arg", "p=0.25", "--arg", "x=4096", "--arg", "seed=123"],
        r"seeded_rand\.py:10: Loom cannot compile `hl\.rand`.*Philox.*bit for bit.*on the "
        r"host",
    ),
    "erf": (["--arg", "x=64x64"], r"erf\.py:10: Loom cannot compile `erf`.*helion-surface"),
    "batch_argmax": (
        ["--arg", "x=4x64x64"],
        r"batch_argmax\.py:11: Loom cannot compile `argmax over a leading axis`",
    ),
    "batch_sum_tiled": (
        ["--arg", "x=4x64x64"],
        r"batch_sum_tiled\.py:11: Loom cannot compile the sum over axis 0 of a rank-3 value"
        r".*the axis is tiled \(tile_b\).*full slice",
    ),
    "stored_race": (
        ["--arg", "x=64x64:bf16", "--arg", "a=64x64:bf16"],
        r"stored_race\.py:14: .*`a load of c, which the same hl\.tile loop stores before "
        r"it`.*race the store.*hl\.barrier",
    ),
    "index_inside_tile": (
        ["--arg", "x=2x64x64"],
        r"index_inside_tile\.py:11: Loom cannot compile `index 63 of x inside a 32x32 tile, "
        r"giving a rank-0 value`.*a tile holds no 0-d value",
    ),
    "shift_unaligned": (
        ["--arg", "x=64x64"],
        r"shift_unaligned\.py:10: Loom cannot compile `the index tile\.index - 16 of x \(a "
        r"shift inside a 32x32 tile\)`.*multiple of 32",
    ),
    "partials_column": (
        ["--arg", "x=64x64"],
        r"partials_column\.py:11: Loom cannot compile `indexing tmp with tile\.id in its last "
        r"dim \(one column per block\)`.*tmp\[tile_k\.id, tile_m, tile_n\]",
    ),
    "tunable_shape": (
        ["--arg", "x=64x64"],
        r"tunable_shape\.py:13: Loom cannot compile `tensor tmp with a dim Helion leaves "
        r"symbolic \(u\d+: splits\)`.*hl\.register_block_size",
    ),
    "view_quarters": (
        ["--arg", "x=64x128"],
        r"view_quarters\.py:10: Loom cannot compile `a view of a \[tile_m, 128\] tile as "
        r"\[tile_m, 4, 32\]`.*hl\.split",
    ),
    "split_unaligned": (
        ["--arg", "x=64x32"],
        r"split_unaligned\.py:10: Loom cannot compile `hl\.split of a last dim of 32 in halves "
        r"of 16`.*multiple of 64",
    ),
    "branch_value": (
        ["--arg", "a=64x256:bf16", "--arg", "b=256x64:bf16"],
        r"branch_value\.py:16: Loom cannot compile `a tensor value assigned under an `if` on "
        r"tile offsets or ids`.*torch\.where",
    ),
    "jagged": (
        ["--arg", "values=64x64", "--arg", "offsets=5:fp32"],
        r"jagged\.py:12: .*data-dependent extents",
    ),
    "import_error": ([], r"could not import kernel file .*import_error\.py.*RuntimeError"),
    "no_kernel": ([], r"no_kernel\.py defines no @helion\.kernel function"),
    "unaligned": (
        ["--arg", "x=100x64"],
        r"unaligned\.py:7: kernel copy: .*100 \(x\[0\]=100\).*not a multiple of the 32x32",
    ),
    "helion_rejects": (
        ["--arg", "x=64x64"],
        r"helion_rejects\.py:7: Helion rejected kernel 'broken'.*undefined_name is not defined\. ",
    ),
}
ARG_ERRORS = {
    "unknown parameter": (["--arg", "y=64x64"], r"the parameters of copy are x"),
    "bad value": (["--arg", "x=big"], r"'big' is neither a shape"),
    "integer tensor": (["--arg", "x=64x64:int8"], r"unknown dtype 'int8'.*int32 is the one"),
    "missing argument": ([], r"needs --arg x=\.\.\."),
    "unknown kernel": (["--kernel", "nope", "--arg", "x=64x64"], r"no Helion kernel named 'nope'"),
    "shape on a file": (["--shape", "M=64", "--arg", "x=64x64"], r"--shape does not apply"),
    "bad reference": (["--arg", "x=64x64", "--reference", "nomodule"], r"is not MODULE:FUNC"),
}


def _check(capsys, argv: list[str], pattern: str) -> None:  # type: ignore[no-untyped-def]
    code = main(argv)  # any exception other than LoomError fails the test with its traceback
    out, err = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert re.search(pattern, lines[0]), lines[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_unsupported_or_malformed_kernel(capsys, name: str) -> None:  # type: ignore[no-untyped-def]
    args, pattern = CASES[name]
    _check(capsys, ["compile", str(CORPUS / f"{name}.py"), *args, "--jobs", "1"], pattern)


@pytest.mark.parametrize("case", sorted(ARG_ERRORS))
def test_bad_command_line_arguments(capsys, case: str) -> None:  # type: ignore[no-untyped-def]
    args, pattern = ARG_ERRORS[case]
    _check(capsys, ["compile", str(CORPUS / "unaligned.py"), *args, "--jobs", "1"], pattern)
