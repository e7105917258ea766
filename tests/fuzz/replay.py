"""Read the grammar value back from a rendered program file (its `FUZZ_PROGRAM`).

The file is parsed, not imported: replaying a case needs neither Helion nor the kernel,
and the value is rebuilt from the grammar's own classes only.
"""

from __future__ import annotations

import ast
from pathlib import Path

from . import grammar
from .grammar import Program


def load_program(path: Path) -> Program:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", "") for t in node.targets] == ["FUZZ_PROGRAM"]
            and isinstance(node.value, ast.Constant)
        ):
            names = {k: v for k, v in vars(grammar).items() if isinstance(v, type)}
            value = eval(node.value.value, {"__builtins__": {}}, names)  # the grammar only
            assert isinstance(value, Program)
            return value
    raise ValueError(f"{path} has no FUZZ_PROGRAM")
