"""A split reduction's terms: each partial's copy and gather to its owner, and the
owner-only merge that folds the partials one by one."""

from __future__ import annotations

from loom.ir.problem import For, HegNode, Leaf, Term
from loom.ir.tile import Gather, If, Reduce, Store
from loom.model import primitives as prim
from loom.model.compute import Compute
from loom.model.transfers import Transfers
from loom.symbolic import Const


class Reductions(Compute, Transfers):
    """Gathers and merges of a split reduction (flash decode)."""

    def gather_terms(self, op: Gather) -> list[Term]:
        tiles = self.tiles(op.operand)
        what = f"gather {op.operand.name} across {op.across} (line {op.line})"
        return [
            prim.pack_term(
                self.arch,
                f"copy {op.operand.name} to its send buffer",
                tiles,
                self.tile_bytes(op.operand.dtype),
            ),
            prim.gather_term(self.arch, what, tiles, self.tile_bytes(op.operand.dtype), self.group),
        ]

    def merge(self, guard: If) -> tuple[list[HegNode], list[prim.TransferSpec]]:
        """Owner-only merge: ops on gathered values fold once per partial."""
        per_partial: list[Term] = []
        once: list[Term] = []
        stores = []
        for op in guard.body:
            if isinstance(op, Store):
                stores.append(self.store_spec(op, owners_only=True))
                continue
            folded = any(v.name in self.gathered for v in op.operands())
            (per_partial if folded else once).extend(self.op_terms(op))
            folds = isinstance(op, Reduce) and op.axis == 0  # its result is one partial-free value
            if folded and not folds:
                self.gathered.update(r.name for r in op.results())
        nodes: list[HegNode] = []
        if per_partial:
            nodes.append(
                For("merge partials", Const(self.group), Leaf("merge@fold", tuple(per_partial)))
            )
        if once:
            nodes.append(Leaf("merge@final", tuple(once)))
        return nodes, stores
