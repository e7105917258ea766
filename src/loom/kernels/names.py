"""Names of the shipped kernels (importable without Helion or torch)."""

from __future__ import annotations

SHIPPED = ("gemm", "flash_attention", "flash_attention_causal", "flash_decode")
