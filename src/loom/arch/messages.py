"""Pydantic's errors on an architecture file in Loom's words: key path, problem, fix.

Each error becomes one line such as ``noc.hop_cycle is not a field of Noc; rename it to
'hop_cycles'``. When some fields fail their own validation the model's after-validator
(the cross-field rules) cannot run, so the rules run here on the rest of the raw file:
the user sees every problem of the file at once, each reported once.
"""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from loom.arch import rules
from loom.arch.rules import NOTHING, Problem
from loom.arch.schema import FIELD_PATHS, ArchFile, field_type


def problem_lines(raw: dict[str, Any], errors: list[ErrorDetails]) -> list[str]:
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
