"""Read an architecture description (YAML) into a frozen :class:`Arch`, validating it once.

The file mirrors the dataclasses of :mod:`loom.arch.spec`: nested mappings (``tile``,
``matmul``, ``compute``, ``noc``, ``dram``, ``fixed``), tables as mappings
(``cycles_per_tile: {LoFi: 16, ...}``), DRAM banks as a list of ``{noc_x, noc_y}`` and a
top-level ``sources:`` mapping from dotted field path to where the number comes from.

A file may start from another description with ``base: <built-in name>`` and give only
what differs (the Blackhole grids 11x10, 12x10 and 13x10 share one base): mappings merge
key by key (``sources`` too), any other value (a list, a number) replaces the base's.

Validation is pydantic (:class:`loom.arch.schema.ArchFile`, strict); its errors become one
:class:`ArchError` that lists every problem with its dotted key path and fix
(:mod:`loom.arch.messages`).
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from loom.arch.messages import problem_lines
from loom.arch.rules import Problem
from loom.arch.schema import ArchFile, to_arch
from loom.arch.spec import Arch
from loom.errors import ArchError


def _data_dir() -> Path:
    return Path(str(resources.files("loom.arch") / "data"))


def builtin_names() -> list[str]:
    """Sorted names of the built-in descriptions (the YAML files shipped in ``data/``)."""
    return list(_builtin_names())


@functools.cache
def _builtin_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in _data_dir().glob("*.yaml")))


def builtin_path(name: str) -> Path:
    """The YAML file of built-in description `name` (for copying and editing)."""
    if name not in builtin_names():
        raise ArchError(_unknown_message(name))
    return _data_dir() / f"{name}.yaml"


def _unknown_message(name: str) -> str:
    return (
        f"unknown architecture '{name}': it is neither a built-in name nor an existing "
        f"file; use one of {', '.join(builtin_names())}, or the path of a YAML file"
    )


def parse_arch(raw: Any, where: str) -> Arch:
    """Validate a parsed YAML document; `where` names it in the error message."""
    if not isinstance(raw, dict):
        problem = Problem(
            "",
            f"must be a mapping of fields at the top level (it is {type(raw).__name__})",
            "start from a built-in description",
        )
        raise ArchError(_message(where, [problem.line()]))
    try:
        return to_arch(ArchFile.model_validate(raw))
    except ValidationError as exc:
        errors = exc.errors()
    raise ArchError(_message(where, problem_lines(raw, errors)))


def _message(where: str, lines: list[str]) -> str:
    if len(lines) == 1:
        return f"arch file '{where}': {lines[0]}"
    numbered = " ".join(f"({i}) {line}." for i, line in enumerate(lines, 1))
    return f"arch file '{where}' has {len(lines)} problems: {numbered}"


def _read(path: Path, where: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArchError(f"arch file '{where}' cannot be read ({exc}); check the path") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ArchError(
            f"arch file '{where}': YAML syntax error{at}: {problem}; fix the syntax"
        ) from None


def _with_base(raw: Any, where: str, seen: tuple[str, ...] = ()) -> Any:
    """`raw` merged over the built-in description its ``base:`` names (recursively)."""
    if not isinstance(raw, dict) or "base" not in raw:
        return raw
    name = raw["base"]
    if not isinstance(name, str) or name not in _builtin_names():
        raise ArchError(
            f"arch file '{where}': base {name!r} is not a built-in description; use one "
            f"of {', '.join(builtin_names())}"
        )
    if name in seen:
        raise ArchError(
            f"arch file '{where}': its bases form a cycle ({' -> '.join((*seen, name))}); "
            "make one of them a complete description"
        )
    path = builtin_path(name)
    base = _with_base(_read(path, str(path)), str(path), (*seen, name))
    rest = {k: v for k, v in raw.items() if k != "base"}
    return _merge(base, rest)


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return over


@functools.lru_cache(maxsize=16)
def _load_builtin(name: str) -> Arch:
    path = builtin_path(name)
    return parse_arch(_with_base(_read(path, str(path)), str(path), (name,)), str(path))


def load_arch(name_or_path: str | Path) -> Arch:
    """A built-in description by name (cached), or a user's YAML file by path.

    A built-in name wins over a file of the same name in the working directory. Raises
    :class:`ArchError` listing every problem of the file at once."""
    text = str(name_or_path)
    if text in _builtin_names():
        return _load_builtin(text)
    path = Path(text)
    if path.is_file():
        return parse_arch(_with_base(_read(path, text), text), text)
    if path.exists():
        raise ArchError(f"arch file '{text}' is not a file; give the path of a YAML file")
    if path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text:
        raise ArchError(
            f"arch file '{text}' not found; check the path, or use a built-in "
            f"name: {', '.join(builtin_names())}"
        )
    raise ArchError(_unknown_message(text))
