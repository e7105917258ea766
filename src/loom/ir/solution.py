"""The result of solving one candidate's problem (paper §2.6, stage 07)."""

from __future__ import annotations

from dataclasses import dataclass, field

STATUSES = ("optimal", "feasible", "infeasible", "pruned", "unknown")
"""`optimal`: proven best for the candidate; `feasible`: best found within the time
limit; `infeasible`: no legal assignment (see `reason`); `pruned`: cannot beat the
incumbent (its lower bound or the solver proved it); `unknown`: time limit, nothing found."""


@dataclass(frozen=True)
class Solution:
    candidate: str
    status: str
    assignment: dict[str, int] = field(default_factory=dict)
    cycles: int = 0
    l1_bytes: int = 0
    dram_bytes: int = 0
    lower_bound: int = 0
    seconds: float = 0.0
    reason: str = ""

    @property
    def solved(self) -> bool:
        return self.status in ("optimal", "feasible")
