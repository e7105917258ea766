"""The fluid network's per-event operations: compiled loops and NumPy twins agree bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.sim.flow_ops import (
    NUMPY_OPS,
    FlowOps,
    advance_loops,
    advance_pop_loops,
    earliest_loops,
    pop_loops,
    put_loops,
    settle_loops,
)
from loom.sim.network import Flow, FluidNetwork

LOOPS = FlowOps(
    advance_loops, earliest_loops, pop_loops, put_loops, advance_pop_loops, settle_loops
)


def _kernels(numpy: bool = False) -> list[FlowOps]:
    from loom.sim.flow_ops import compiled_ops

    return [NUMPY_OPS] * numpy + [LOOPS, compiled_ops()]


_flows = st.lists(
    st.tuples(
        st.floats(1.0, 1e6),  # bytes
        st.floats(0.0, 1.0),  # fraction left
        st.sampled_from([0.0, 0.3, 1.7, 32.0, 1 / 3]),  # rate
        st.lists(st.integers(0, 7), min_size=0, max_size=4, unique=True),
    ),
    min_size=0,
    max_size=10,
)


def _table(flows: list[tuple[float, float, float, list[int]]]) -> list[np.ndarray]:
    """The network's arrays (with spare room behind the live part, as it keeps them)."""
    n, ne = len(flows), sum(len(r) for *_, r in flows)
    nbytes = np.array([b for b, *_ in flows] + [0.0] * 3)
    rem = np.array([b * f for b, f, *_ in flows] + [0.0] * 3)
    rate = np.array([r for _, _, r, _ in flows] + [0.0] * 3)
    cap = np.arange(n + 3, dtype=np.float64)
    ent_res = np.array([x for *_, r in flows for x in r] + [0] * 2, dtype=np.int64)
    ent_w = np.linspace(0.1, 1.0, ne + 2)
    ent_f = np.array([i for i, (*_, r) in enumerate(flows) for _ in r] + [0] * 2, dtype=np.int64)
    return [cap, rem, rate, nbytes, ent_res, ent_w, ent_f, np.zeros(n + 3, dtype=np.int64)]


@settings(max_examples=60, deadline=None)
@given(_flows, st.floats(0.0, 1e4))
def test_compiled_and_numpy_operations_give_the_same_bits(
    flows: list[tuple[float, float, float, list[int]]], dt: float
) -> None:
    n, ne = len(flows), sum(len(r) for *_, r in flows)
    want = _table(flows)
    carried_want, load = np.linspace(0.0, 5.0, 8), np.linspace(0.5, 2.0, 8)
    load[[1, 6]] = 0.0  # resources no flow uses: left out of `used`, as the network does
    used = np.array([0, 2, 3, 4, 5, 7, 0, 0], dtype=np.int64)
    full = np.linspace(0.0, 5.0, 8)
    full += load * dt  # every resource visited: the same bits
    NUMPY_OPS.advance(want[1], want[2], n, carried_want, load, used, 6, dt)
    assert carried_want.tobytes() == full.tobytes()
    want_rem = want[1].copy()
    want_next = NUMPY_OPS.earliest(want[1], want[2], n)
    want_pop = NUMPY_OPS.pop(n, ne, *want)
    for ops in _kernels():
        got = _table(flows)
        carried = np.linspace(0.0, 5.0, 8)
        ops.advance(got[1], got[2], n, carried, load, used, 6, dt)
        assert carried.tobytes() == carried_want.tobytes()
        assert got[1].tobytes() == want_rem.tobytes()
        nxt = ops.earliest(got[1], got[2], n)
        assert nxt == want_next or (np.isinf(nxt) and np.isinf(want_next))
        got_pop = ops.pop(n, ne, *got)
        assert got_pop == want_pop
        m, me, count = got_pop
        for g, w, size in zip(got, want, [m] * 4 + [me] * 3 + [count], strict=True):
            assert g[:size].tobytes() == w[:size].tobytes()


@settings(max_examples=40, deadline=None)
@given(_flows, st.floats(0.0, 1e4))
def test_steps_do_their_parts(
    flows: list[tuple[float, float, float, list[int]]], dt: float
) -> None:
    """advance_pop is advance then pop; put is advance then the new flow's slot and
    entries: the same bits, NumPy, loops and compiled alike."""
    n, ne = len(flows), sum(len(r) for *_, r in flows)
    load, used = np.linspace(0.5, 2.0, 8), np.arange(8, dtype=np.int64)
    want, carried_want = _table(flows), np.linspace(0.0, 5.0, 8)
    NUMPY_OPS.advance(want[1], want[2], n, carried_want, load, used, 8, dt)
    want_pop = NUMPY_OPS.pop(n, ne, *want)
    res, w = np.array([3, 1], dtype=np.int64), np.array([0.25, 1.0])
    for ops in _kernels(numpy=True):
        got, carried = _table(flows), np.linspace(0.0, 5.0, 8)
        assert ops.advance_pop(dt, carried, load, used, 8, n, ne, *got) == want_pop
        m, me, count = want_pop
        for g, x, size in zip(got, want, [m] * 4 + [me] * 3 + [count], strict=True):
            assert g[:size].tobytes() == x[:size].tobytes()
        assert carried.tobytes() == carried_want.tobytes()
        got, carried = _table(flows), np.linspace(0.0, 5.0, 8)
        cap, rem, rate, nbytes, ent_res, ent_w, ent_f, _ = got
        ops.put(
            rem,
            rate,
            n,
            carried,
            load,
            used,
            8,
            dt,
            cap,
            nbytes,
            ent_res,
            ent_w,
            ent_f,
            ne,
            7.5,
            30.0,
            40.0,
            res[: min(2, len(ent_res) - ne)],
            w[: min(2, len(ent_res) - ne)],
        )
        assert carried.tobytes() == carried_want.tobytes()
        assert rem[:n].tobytes() == _advanced(flows, dt)[:n].tobytes()
        assert (cap[n], rem[n], rate[n], nbytes[n]) == (7.5, 30.0, 0.0, 40.0)
        k = min(2, len(ent_res) - ne)
        assert ent_res[ne : ne + k].tolist() == res[:k].tolist()
        assert ent_w[ne : ne + k].tolist() == w[:k].tolist() and set(ent_f[ne : ne + k]) <= {n}


def _advanced(flows: list[tuple[float, float, float, list[int]]], dt: float) -> np.ndarray:
    t = _table(flows)
    NUMPY_OPS.advance(
        t[1], t[2], len(flows), np.zeros(8), np.zeros(8), np.zeros(8, dtype=np.int64), 0, dt
    )
    return t[1]


def test_finished_flows_leave_in_order_and_the_rest_keep_their_entries() -> None:
    net = FluidNetwork(np.array([10.0, 10.0, 10.0]))
    done: list[str] = []
    for name, nbytes, res in [("a", 50, [0, 1]), ("b", 10, [1]), ("c", 20, [2]), ("d", 90, [0])]:
        flow = Flow(nbytes, 100.0, np.array(res), np.ones(len(res)), lambda n=name: done.append(n))
        net.add(0.0, flow)
    t = net.next_completion()  # b (5 B/cycle) and c (10 B/cycle) end first, together
    for f in net.pop_done(t):
        f.on_done()
    assert done == ["b", "c"]
    assert [f.nbytes for f in net.flows] == [50.0, 90.0]
    assert net._ent_res[: net._ne].tolist() == [0, 1, 0]
    assert net._ent_f[: net._ne].tolist() == [0, 0, 1]
