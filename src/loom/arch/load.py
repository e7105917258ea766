"""Read an architecture description (YAML) into a frozen :class:`Arch`, validating it once.

The file mirrors the dataclasses of :mod:`loom.arch.spec`: nested mappings (``tile``,
``matmul``, ``compute``, ``noc``, ``dram``, ``fixed``), tables as mappings
(``cycles_per_tile: {LoFi: 16, ...}``), DRAM banks as a list of ``{noc_x, noc_y}`` and a
top-level ``sources:`` mapping from dotted field path to where the number comes from.

A file may start from another description with ``base: <built-in name>`` and give only
what differs (the Blackhole grids 11x10, 12x10 and 13x10 share one base): mappings merge
key by key (``sources`` too), any other value (a list, a number) replaces the base's.

Validation is pydantic (:class:`loom.arch.schema.ArchFile`, strict): this module turns its
errors into one :class:`ArchError` that lists every problem with its dotted key path and
fix. When some fields fail, the cross-field rules still run on the rest of the file, so
the user sees every problem at once.
"""

from __future__ import annotations

import difflib
import functools
import typing
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from loom.arch import rules
from loom.arch.rules import NOTHING, Problem
from loom.arch.schema import FIELD_PATHS, ArchFile, field_type, to_arch
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
    raise ArchError(_message(where, _problem_lines(raw, errors)))


def _problem_lines(raw: dict[str, Any], errors: list[ErrorDetails]) -> list[str]:
    """One line per problem: the field errors in file order, then the cross-field rules
    (run on what validated when the model's own after-validator could not run)."""
    problems: list[Problem] = []
    cross: list[Problem] | None = None
    renamed = _renamed(raw, errors)
    for err in errors:
        if err["type"] == "arch_rules":
            cross = list(err.get("ctx", {})["problems"])
            continue
        loc = tuple(str(p) for p in err["loc"])
        if err["type"] == "missing" and loc in renamed:
            continue  # reported as the misspelt key
        problems.append(_problem(raw, err))
    if cross is None:
        bad = tuple(tuple(str(p) for p in e["loc"] if p != "[key]") for e in errors)
        cross = rules.check(rules.View(raw, bad), FIELD_PATHS)
    return [p.line() for p in (*problems, *cross)]


def _section(loc: tuple[int | str, ...]) -> tuple[str, type[BaseModel] | None, Any]:
    """Dotted path of `loc`, the model holding its last key, and the type found there."""
    path, owner = "", None
    tp: Any = ArchFile
    for part in loc:
        if part == "[key]":
            path += " key"
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            owner = tp
            tp = field_type(tp, str(part)) if part in tp.model_fields else Any
            path = f"{path}.{part}" if path else str(part)
        elif typing.get_origin(tp) is list:
            tp = _bare(typing.get_args(tp)[0])
            path = f"{path}[{part}]"
        elif typing.get_origin(tp) is dict:
            tp = _bare(typing.get_args(tp)[1])
            path = f"{path}.{part}"
        else:
            path = f"{path}.{part}"
    return path, owner, tp


def _bare(tp: Any) -> Any:
    return typing.get_args(tp)[0] if typing.get_origin(tp) is typing.Annotated else tp


def _renamed(raw: dict[str, Any], errors: list[ErrorDetails]) -> set[tuple[str, ...]]:
    """Missing fields that an unknown key of the same section is reported as a typo of."""
    out: set[tuple[str, ...]] = set()
    for err in errors:
        if err["type"] == "extra_forbidden":
            parent = tuple(str(p) for p in err["loc"][:-1])
            near = _near(raw, err["loc"])
            if near:
                out.add((*parent, near))
    return out


def _near(raw: dict[str, Any], loc: tuple[int | str, ...]) -> str | None:
    """The field an unknown key at `loc` most likely misspells (one not given)."""
    _, owner, _ = _section(loc)
    node: Any = raw
    for part in loc[:-1]:
        node = node[part]
    known = set(owner.model_fields) if owner else set()
    match = difflib.get_close_matches(str(loc[-1]), sorted(known - set(node)), n=1)
    return match[0] if match else None


def _is_fraction(owner: type[BaseModel] | None, loc: tuple[int | str, ...]) -> bool:
    """True for a field bounded to (0, 1] (:data:`loom.arch.schema.Fraction`)."""
    info = owner.model_fields.get(str(loc[-1])) if owner else None
    return info is not None and any(getattr(m, "le", None) == 1 for m in info.metadata)


_WHAT = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "string_type": "must be a non-empty string",
    "string_too_short": "must be a non-empty string",
    "list_type": "must be a list",
    "model_type": "must be a mapping of fields",
    "dict_type": "must be a non-empty mapping such as {key: value}",
    "too_short": "must be a non-empty mapping such as {key: value}",
}
_FIX = {
    "list_type": "write it as a YAML list [..]",
    "model_type": "write it as a YAML mapping",
    "dict_type": "write it as a YAML mapping",
    "too_short": "write it as a YAML mapping",
}


def _problem(raw: dict[str, Any], err: ErrorDetails) -> Problem:
    """The pydantic error `err` in Loom's words: the key path, what is wrong, the fix."""
    kind, loc, ctx = err["type"], err["loc"], err.get("ctx", {})
    path, owner, _ = _section(loc)
    got = err.get("input", NOTHING)
    if kind == "missing":
        return Problem(path, "is missing", "add it (every built-in description shows it)")
    if kind == "extra_forbidden":
        title = owner.model_config.get("title") if owner else None
        near = _near(raw, loc)
        return Problem(
            path,
            f"is not a field of {title}",
            f"rename it to '{near}'" if near else "remove it",
        )
    if kind in ("greater_than", "less_than_equal") and _is_fraction(owner, loc):
        return Problem(path, "must be a fraction in (0, 1]", "fix the value", got)
    if kind == "greater_than":
        return Problem(path, "must be a positive number", "fix the value", got)
    if kind == "greater_than_equal":
        return Problem(path, "must be zero or a positive number", "fix the value", got)
    if kind == "less_than_equal":
        return Problem(
            path, f"must be at most {ctx['le']:g}", "fix the value (check its unit)", got
        )
    what = _WHAT.get(kind, err["msg"][0].lower() + err["msg"][1:])
    return Problem(path, what, _FIX.get(kind, "fix the value"), got)


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
