"""The fluid bandwidth solver and the NoC routes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.arch import load_arch
from loom.sim import network
from loom.sim.fill_jit import compiled_filling, filling_loops
from loom.sim.fill_numpy import progressive_filling, rates_and_load
from loom.sim.network import Flow, FluidNetwork
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


@pytest.mark.parametrize("solver", ["compiled", "numpy"])
def test_an_idle_network_carries_nothing(solver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flow, an idle gap, another flow: each resource carries the bytes the flows moved
    through it (weight x bytes), none during the gap, when the network had no flows."""
    if solver == "numpy":
        monkeypatch.setattr(network, "compiled_fill_into", lambda: None)
    samples: list[tuple[float, list[float]]] = []
    net = FluidNetwork(np.array([10.0, 20.0, 5.0]), lambda t, load: samples.append((t, list(load))))
    done: list[str] = []
    for start, nbytes, res, w in [
        (0.0, 100.0, [0, 1], [1.0, 0.5]),
        (500.0, 60.0, [1, 2], [1.0, 1.0]),
    ]:
        net.add(start, Flow(nbytes, 50.0, np.array(res), np.array(w), lambda: done.append("x")))
        for f in net.pop_done(net.next_completion()):
            f.on_done()
    assert done == ["x", "x"] and net.active == 0
    assert net.carried.tolist() == pytest.approx([100.0, 50.0 + 60.0, 60.0])
    assert samples[1] == (10.0, [0.0, 0.0, 0.0])  # the trace's load drops when it empties


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
    rates = progressive_filling(capacity, fcaps, ent_res, np.ones(len(ent_res)), ent_f)
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


def _reference_filling(
    capacity: np.ndarray,
    caps: np.ndarray,
    ent_res: np.ndarray,
    ent_w: np.ndarray,
    ent_f: np.ndarray,
) -> np.ndarray:
    """The plain progressive filling (masking frozen flows' entries every round) that
    the simulator's faster version must reproduce bit for bit."""
    n = len(caps)
    rates = np.zeros(n)
    frozen = np.zeros(n, dtype=bool)
    residual = capacity.astype(np.float64, copy=True)
    tol = capacity * 1e-9
    level = 0.0
    while not frozen.all():
        active = ~frozen[ent_f]
        uw = np.bincount(ent_res[active], weights=ent_w[active], minlength=len(capacity))
        used = uw > 0.0
        d_res = float((residual[used] / uw[used]).min()) if used.any() else math.inf
        d_cap = float((caps[~frozen] - level).min())
        step = max(min(d_res, d_cap), 0.0)
        level += step
        residual -= uw * step
        newly = ~frozen & (caps <= level * (1 + 1e-9))
        saturated = used & (residual <= tol)
        if saturated.any():
            newly[ent_f[active & saturated[ent_res]]] = True
        if not newly.any():
            newly = ~frozen
        rates[newly] = np.minimum(caps[newly], level)
        frozen |= newly
    return rates


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.01, 80),
            st.lists(
                st.tuples(st.integers(0, 9), st.sampled_from([1.0, 0.5, 1 / 3, 0.25, 0.7])),
                min_size=0,
                max_size=6,
                unique_by=lambda e: e[0],
            ),
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.floats(0.5, 60), min_size=10, max_size=10),
)
def test_filling_is_bit_identical_to_the_reference(
    flows: list[tuple[float, list[tuple[int, float]]]], caps: list[float]
) -> None:
    capacity = np.array(caps)
    ent_res = np.array([r for _, es in flows for r, _ in es], dtype=np.int64)
    ent_w = np.array([w for _, es in flows for _, w in es], dtype=np.float64)
    ent_f = np.repeat(np.arange(len(flows)), [len(es) for _, es in flows])
    fcaps = np.array([c for c, _ in flows])
    got = progressive_filling(capacity, fcaps, ent_res, ent_w, ent_f)
    want = _reference_filling(capacity, fcaps, ent_res, ent_w, ent_f)
    assert got.tobytes() == want.tobytes()
    # the loop kernel, run as Python and as compiled by Numba, gives the same bits,
    # and so does the per-resource load it sums
    _, want_load = rates_and_load(capacity, fcaps, ent_res, ent_w, ent_f)
    kernels = [filling_loops, compiled_filling()]
    for kernel in kernels:
        assert kernel is not None, "Numba is a dependency (pyproject.toml); install it"
        rates, load = kernel(capacity, fcaps, ent_res, ent_w, ent_f)
        assert rates.tobytes() == want.tobytes()
        assert load.tobytes() == want_load.tobytes()
