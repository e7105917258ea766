"""Loom: a tuning-free compiler of Helion tile kernels for Tenstorrent Wormhole and Blackhole."""

__version__ = "0.1.0"
