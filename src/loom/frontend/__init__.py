"""Helion frontend: a bound Helion kernel becomes a TileProgram (the only Helion user)."""

from loom.frontend.importer import import_kernel

__all__ = ["import_kernel"]
