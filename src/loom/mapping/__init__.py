"""Mapping stage: core views, axis dominance, reuse, multicast and gather -> Candidates."""

from loom.mapping.enumerate import enumerate_candidates

__all__ = ["enumerate_candidates"]
