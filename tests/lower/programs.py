"""Lowered programs and torch references of the case matrix, built once per session
(the Helion import behind each kernel and shape is cached in `schedules`)."""

from __future__ import annotations

import functools
import importlib

from cases import Case

from loom.arch import load_arch
from loom.dataflow import build_buffers
from loom.ir.program import Program
from loom.lower import lower

_PROGRAMS: dict[str, Program] = {}


def lowered(case: Case) -> Program:
    if case.id not in _PROGRAMS:
        tile = case.program()
        schedule = case.schedule()
        _PROGRAMS[case.id] = lower(tile, build_buffers(tile), schedule, load_arch(case.arch))
    return _PROGRAMS[case.id]


@functools.cache
def _reference(kernel: str, shape: tuple[tuple[str, int], ...]) -> tuple:
    module = importlib.import_module(f"loom.kernels.{kernel}")
    inputs = module.make_inputs(dict(shape))
    return inputs, module.reference(*inputs)


def reference(case: Case) -> tuple:
    """(inputs, reference output) of the case's kernel and shape."""
    return _reference(case.kernel, tuple(sorted(case.shape.items())))
