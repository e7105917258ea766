"""Helion frontend: a bound Helion kernel becomes a TileProgram (the only Helion user)."""

from loom.frontend.importer import check_alignment, import_kernel, kernel_location

__all__ = ["check_alignment", "import_kernel", "kernel_location"]
