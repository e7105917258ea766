"""The affine CUDA path: parse -> TilePlan -> TileFlow -> Task -> Physical -> Program.

Each checkpoint is a frozen value with a printer; annotations (validated YAML) choose
the policies each checkpoint applies. Physical lowers each launch into Loom's Program,
which the TT-Lang backend and the timing simulator share with the Helion path.
"""

from loom.cuda.annotations import Annotations, load_annotations, parse_annotations
from loom.cuda.cost import LaunchCost, barrier_cycles, launch_cost
from loom.cuda.lower import LaunchProgram, lower_launch
from loom.cuda.parse import parse_file, parse_source
from loom.cuda.physical import Physical, build_physical, format_physical
from loom.cuda.reference import run_reference
from loom.cuda.task import Task, build_task, format_task
from loom.cuda.tileflow import TileFlow, build_tileflow, format_tileflow
from loom.cuda.tileplan import TilePlan, build_tileplan, format_tileplan

__all__ = [
    "Annotations",
    "LaunchCost",
    "LaunchProgram",
    "Physical",
    "Task",
    "TileFlow",
    "TilePlan",
    "barrier_cycles",
    "build_physical",
    "build_task",
    "build_tileflow",
    "build_tileplan",
    "format_physical",
    "format_task",
    "format_tileflow",
    "format_tileplan",
    "launch_cost",
    "load_annotations",
    "lower_launch",
    "parse_annotations",
    "parse_file",
    "parse_source",
    "run_reference",
]
