"""Chrome / Perfetto trace events of one simulation.

Tracks: one process per core with a thread per engine (busy intervals as complete
events), one process per NoC with a counter per link group (the X links of a router row,
the Y links of a router column: load as a fraction of their bandwidth), and one DRAM
process with a counter per bank. Times are microseconds, as the format expects.
:func:`trace_json` returns the text; writing the file is the caller's business.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from loom.sim.engine import Process
from loom.sim.topology import Topology

_ENGINE_TID = {"reader": 1, "compute": 2, "writer": 3}
_NOC_PID = 100_000
_DRAM_PID = 200_000


def trace_events(
    procs: Sequence[Process],
    samples: Iterable[tuple[float, np.ndarray]],
    topo: Topology,
    clock_ghz: float,
) -> tuple[dict[str, Any], ...]:
    us = 1.0 / (clock_ghz * 1e3)
    events: list[dict[str, Any]] = []
    pids: dict[tuple[int, int], int] = {}
    for proc in procs:
        pid = pids.setdefault(proc.core, len(pids) + 1)
        tid = _ENGINE_TID.get(proc.engine, 9)
        events.append(_meta("thread_name", pid, tid, proc.engine))
        for start, end, what, loops in proc.intervals or ():
            event = {
                "name": what,
                "ph": "X",
                "pid": pid,
                "tid": tid,
                "ts": start * us,
                "dur": (end - start) * us,
            }
            if loops:
                event["args"] = {"loops": loops}
            events.append(event)
    for core, pid in pids.items():
        events.append(_meta("process_name", pid, 0, f"core ({core[0]},{core[1]})"))
        events.append(
            {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}
        )
    for noc in (0, 1):
        events.append(_meta("process_name", _NOC_PID + noc, 0, f"NoC{noc} links"))
    events.append(_meta("process_name", _DRAM_PID, 0, "DRAM banks"))
    events.extend(_counters(samples, topo, us))
    return tuple(events)


def _meta(kind: str, pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def _counters(
    samples: Iterable[tuple[float, np.ndarray]], topo: Topology, us: float
) -> list[dict[str, Any]]:
    gx, gy = topo.gx, topo.gy
    cap = topo.params.link_bytes_per_cycle
    bank_cap = topo.params.bank_bytes_per_cycle
    last: dict[tuple[int, str], float] = {}
    out: list[dict[str, Any]] = []
    names = _group_names(gx, gy)
    for t, load in _last_per_instant(samples):
        links = load[: topo.n_links].reshape(2, gy, gx, 2)
        rows = links[:, :, :, 0].sum(axis=2) / (cap * gx)  # (noc, y)
        cols = links[:, :, :, 1].sum(axis=1) / (cap * gy)  # (noc, x)
        values: list[tuple[int, str, float]] = []
        for noc in (0, 1):
            values += [(_NOC_PID + noc, names[noc][0][y], float(rows[noc, y])) for y in range(gy)]
            values += [(_NOC_PID + noc, names[noc][1][x], float(cols[noc, x])) for x in range(gx)]
        banks = load[topo.n_links + topo.n_ports :] / bank_cap
        values += [(_DRAM_PID, f"bank {b}", float(v)) for b, v in enumerate(banks)]
        for pid, name, value in values:
            key = (pid, name)
            if last.get(key, 0.0 if value == 0.0 else -1.0) != value:
                last[key] = value
                out.append(
                    {
                        "name": name,
                        "ph": "C",
                        "pid": pid,
                        "ts": t * us,
                        "args": {"load": round(value, 4)},
                    }
                )
    return out


def _last_per_instant(
    samples: Iterable[tuple[float, np.ndarray]],
) -> Iterator[tuple[float, np.ndarray]]:
    """The samples less those superseded at their own instant (the network emptied and a
    new flow started at once: the load of the gap, none, is not drawn)."""
    prev: tuple[float, np.ndarray] | None = None
    for sample in samples:
        if prev is not None and prev[0] != sample[0]:
            yield prev
        prev = sample
    if prev is not None:
        yield prev


def _group_names(gx: int, gy: int) -> tuple[tuple[list[str], list[str]], ...]:
    return (
        ([f"row y={y} east" for y in range(gy)], [f"column x={x} south" for x in range(gx)]),
        ([f"row y={y} west" for y in range(gy)], [f"column x={x} north" for x in range(gx)]),
    )


def trace_json(events: Sequence[dict[str, Any]]) -> str:
    """The trace as Chrome JSON (open it in ui.perfetto.dev or chrome://tracing)."""
    return json.dumps({"traceEvents": list(events), "displayTimeUnit": "ns"})
