"""The fluid bandwidth solver and the NoC routes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.arch import load_arch
from loom.sim.network import Flow, FluidNetwork, _progressive_filling
from loom.sim.params import from_arch
from loom.sim.topology import Topology


def _flow(nbytes: float, cap: float, res: list[int], done: list[str], name: str) -> Flow:
    return Flow(
        nbytes, cap, np.array(res, dtype=np.int64), np.ones(len(res)), lambda: done.append(name)
    )


def test_two_flows_share_a_link_equally() -> None:
    net = FluidNetwork(np.array([10.0, 100.0]))
    done: list[str] = []
    net.add(0.0, _flow(100, 50, [0], done, "a"))
    net.add(0.0, _flow(100, 50, [0, 1], done, "b"))
    t = net.next_completion()
    assert [f.rate for f in net.flows] == pytest.approx([5.0, 5.0])
    assert t == pytest.approx(20.0)


def test_capped_flow_leaves_the_rest_to_others() -> None:
    net = FluidNetwork(np.array([10.0]))
    done: list[str] = []
    net.add(0.0, _flow(100, 2, [0], done, "slow"))
    net.add(0.0, _flow(100, 50, [0], done, "fast"))
    net.next_completion()
    assert sorted(f.rate for f in net.flows) == pytest.approx([2.0, 8.0])


def test_rates_are_resolved_when_a_flow_ends() -> None:
    net = FluidNetwork(np.array([10.0]))
    done: list[str] = []
    net.add(0.0, _flow(50, 50, [0], done, "short"))
    net.add(0.0, _flow(150, 50, [0], done, "long"))
    t1 = net.next_completion()
    for f in net.pop_done(t1):
        f.on_done()
    assert t1 == pytest.approx(10.0) and done == ["short"]
    t2 = net.next_completion()
    assert t2 == pytest.approx(20.0)  # 100 bytes left at the full 10 B/cycle
    assert net.carried[0] == pytest.approx(100.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.5, 50), st.lists(st.integers(0, 4), min_size=1, max_size=3, unique=True)
        ),
        min_size=1,
        max_size=8,
    ),
    st.lists(st.floats(1, 40), min_size=5, max_size=5),
)
def test_fair_rates_are_feasible_and_saturate_something(
    flows: list[tuple[float, list[int]]], caps: list[float]
) -> None:
    capacity = np.array(caps)
    res = [np.array(r, dtype=np.int64) for _, r in flows]
    ent_res = np.concatenate(res)
    ent_f = np.repeat(np.arange(len(flows)), [len(r) for r in res])
    fcaps = np.array([c for c, _ in flows])
    rates = _progressive_filling(capacity, fcaps, ent_res, np.ones(len(ent_res)), ent_f)
    load = np.bincount(ent_res, weights=rates[ent_f], minlength=5)
    assert np.all(load <= capacity * (1 + 1e-6))
    assert np.all(rates <= fcaps * (1 + 1e-6))
    for i, r in enumerate(res):  # every flow is stopped by its cap or a full resource
        full = np.any(load[r] >= capacity[r] * (1 - 1e-6))
        assert rates[i] >= fcaps[i] * (1 - 1e-6) or full


@pytest.fixture(scope="module")
def topo() -> Topology:
    return Topology(from_arch(load_arch("wormhole_n150")))


def test_noc0_goes_east_then_south_and_wraps(topo: Topology) -> None:
    route = topo.route(0, (8, 1), (1, 3))
    dirs = [topo.describe_link(r) for r in route]
    assert [d[3] for d in dirs] == ["east"] * 3 + ["south"] * 2
    assert [(d[1], d[2]) for d in dirs] == [(8, 1), (9, 1), (0, 1), (1, 1), (1, 2)]


def test_noc1_goes_north_then_west(topo: Topology) -> None:
    route = topo.route(1, (2, 2), (1, 11))
    dirs = [topo.describe_link(r) for r in route]
    assert [d[3] for d in dirs] == ["north"] * 3 + ["west"]
    assert [(d[1], d[2]) for d in dirs] == [(2, 2), (2, 1), (2, 0), (2, 11)]


def test_multicast_tree_is_the_union_of_routes(topo: Topology) -> None:
    dsts = tuple(topo.core_xy((0, x)) for x in range(1, 8))
    tree = topo.multicast_links(0, topo.core_xy((0, 0)), dsts)
    assert len(tree) == topo.hops(0, topo.core_xy((0, 0)), topo.core_xy((0, 7)))
