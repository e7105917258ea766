"""Baseline policies (TTNN's matmul and attention rules, a TileLoom-style search), each a
Schedule producer: it reads the architecture and the kernel and writes a Schedule whose
notes cite its rule's source, so it runs through the same lowering and simulator as Loom."""

from __future__ import annotations

from loom.baselines.build import Policy, build_schedule
from loom.baselines.ttnn_matmul_oob import TtnnMatmulConfig, oob_matmul_config

__all__ = ["Policy", "TtnnMatmulConfig", "build_schedule", "oob_matmul_config"]
