"""The chip as shared resources: NoC links, core ports and DRAM banks, and the routes
that transfers take through them.

Each NoC is a 2-D torus with dimension-order routing: NoC0 goes east (x+1) then south
(y+1), NoC1 north (y-1) then west (x-1), wrapping around. A link is named by the router it
leaves and its axis; its direction follows from the NoC. Every resource has an integer id
(links, then injection/absorption ports of every router, then DRAM banks) so that the
bandwidth solver can work on flat arrays.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from loom.sim.params import SimParams

Core = tuple[int, int]
"""A compute core (y, x) in program coordinates."""
XY = tuple[int, int]
"""A router (x, y) in NoC coordinates."""

_DIRS = (("east", "south"), ("north", "west"))


class Topology:
    """Resource ids, capacities and routes of one architecture."""

    def __init__(self, params: SimParams) -> None:
        self.params = params
        self.gx, self.gy = params.noc_grid
        per_noc = self.gx * self.gy
        self.n_links = 2 * per_noc * 2
        self.n_ports = 2 * per_noc * 2
        self.n_banks = len(params.bank_noc_xy)
        self.num_resources = self.n_links + self.n_ports + self.n_banks
        cap = np.full(self.num_resources, params.link_bytes_per_cycle, dtype=np.float64)
        cap[self.n_links + self.n_ports :] = params.bank_bytes_per_cycle
        self.capacity = cap
        self.route = lru_cache(maxsize=None)(self._route)
        self.multicast_links = lru_cache(maxsize=None)(self._multicast_links)

    # ----- ids ------------------------------------------------------------------------

    def link_id(self, noc: int, x: int, y: int, axis: int) -> int:
        return ((noc * self.gy + y) * self.gx + x) * 2 + axis

    def port_id(self, noc: int, xy: XY, absorb: bool) -> int:
        x, y = xy
        return self.n_links + ((noc * self.gy + y) * self.gx + x) * 2 + int(absorb)

    def bank_id(self, bank: int) -> int:
        return self.n_links + self.n_ports + bank

    def is_link(self, rid: int) -> bool:
        return rid < self.n_links

    def is_bank(self, rid: int) -> bool:
        return rid >= self.n_links + self.n_ports

    def describe_link(self, rid: int) -> tuple[int, int, int, str]:
        """(noc, x, y, direction) of link `rid`."""
        axis = rid % 2
        rest = rid // 2
        x = rest % self.gx
        rest //= self.gx
        y = rest % self.gy
        noc = rest // self.gy
        return noc, x, y, _DIRS[noc][axis if noc == 0 else 1 - axis]

    # ----- coordinates ----------------------------------------------------------------

    def core_xy(self, core: Core) -> XY:
        y, x = core
        return (self.params.worker_noc_x[x], self.params.worker_noc_y[y])

    def bank_xy(self, bank: int) -> XY:
        return self.params.bank_noc_xy[bank]

    # ----- routes ---------------------------------------------------------------------

    def _route(self, noc: int, src: XY, dst: XY) -> tuple[int, ...]:
        """Links of the dimension-order route from `src` to `dst` on `noc`."""
        (sx, sy), (dx, dy) = src, dst
        gx, gy = self.gx, self.gy
        links: list[int] = []
        if noc == 0:
            x, y = sx, sy
            while x != dx:
                links.append(self.link_id(0, x, y, 0))
                x = (x + 1) % gx
            while y != dy:
                links.append(self.link_id(0, x, y, 1))
                y = (y + 1) % gy
        else:
            x, y = sx, sy
            while y != dy:
                links.append(self.link_id(1, x, y, 1))
                y = (y - 1) % gy
            while x != dx:
                links.append(self.link_id(1, x, y, 0))
                x = (x - 1) % gx
        return tuple(links)

    def hops(self, noc: int, src: XY, dst: XY) -> int:
        return len(self.route(noc, src, dst))

    def round_trip_hops(self, noc: int, src: XY, dst: XY) -> int:
        """Hops of a write and of its acknowledgement, which returns to the writer on the
        same NoC: each ring only runs one way, so whatever axis the write moved along,
        the two together go once around that axis's whole ring (`gx` or `gy` hops)."""
        return self.hops(noc, src, dst) + self.hops(noc, dst, src)

    def _multicast_links(self, noc: int, src: XY, dsts: tuple[XY, ...]) -> tuple[int, ...]:
        """The multicast tree: the union of the unicast routes to every destination."""
        links: set[int] = set()
        for d in dsts:
            links.update(self.route(noc, src, d))
        return tuple(sorted(links))
