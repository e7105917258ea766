"""Which engine issues each load: the busiest-link comparison of `choose_load_engines`."""

from __future__ import annotations

from loom.arch import load_arch
from loom.arch.noc import NOC_OF_ENGINE, choose_load_engines, combined_peak, load_link_load
from loom.ir.tile import Load, accesses

UNICAST = ("unicast", (1, 1))


def _kv_engines(b, arch_name: str, cores: tuple[int, int]) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    ops = accesses(b.program.body)
    plans = {i: UNICAST for i, op in enumerate(ops) if isinstance(op, Load)}
    chosen = choose_load_engines(b, cores, plans, load_arch(arch_name))
    at = {op.tensor: i for i, op in enumerate(ops) if isinstance(op, Load)}
    return chosen[at["k"]], chosen[at["v"]]


def test_decode_streams_k_and_v_on_both_nocs_on_blackhole(buffered) -> None:  # type: ignore[no-untyped-def]
    """Blackhole, every core reading its own K/V: NoC0 and NoC1 each carry one operand
    at a lower busiest link than one NoC carrying both."""
    assert sorted(_kv_engines(buffered["flash_decode"], "blackhole_p150_13x10", (10, 13))) == [
        "reader",
        "writer",
    ]


def test_decode_keeps_k_and_v_on_noc0_on_wormhole(buffered) -> None:  # type: ignore[no-untyped-def]
    """Wormhole's banks stand in two columns: a response on NoC1 climbs its bank's column
    (north first), so every bank of a column shares that column's links, while on NoC0 it
    spreads along the bank's row first. NoC0 carrying K and V loads its busiest link less
    than NoC1 carrying one of them, so both stay on the reader."""
    arch, cores = load_arch("wormhole_n150"), (8, 8)
    noc0 = combined_peak([load_link_load(arch, "reader", cores, *UNICAST)] * 2)
    noc1 = combined_peak([load_link_load(arch, "writer", cores, *UNICAST)])
    assert noc0 < noc1 and NOC_OF_ENGINE["writer"] == 1
    assert _kv_engines(buffered["flash_decode"], "wormhole_n150", cores) == ("reader", "reader")


def test_gemm_operands_are_never_put_on_one_engine(buffered) -> None:  # type: ignore[no-untyped-def]
    """A and B are different blocks: only the plan's order or the traded one is offered."""
    b = buffered["gemm"]
    ops = accesses(b.program.body)
    plans = {i: UNICAST for i, op in enumerate(ops) if isinstance(op, Load)}
    for name, cores in (("wormhole_n150", (8, 8)), ("blackhole_p150_13x10", (10, 13))):
        chosen = choose_load_engines(b, cores, plans, load_arch(name))
        assert sorted(chosen.values()) == ["reader", "writer"]


def test_two_descriptions_with_one_name_keep_their_own_routes() -> None:
    # a variant with fewer banks and rows under another's name (a user's edit of a
    # built-in, a property test's draw): the NoC map's caches must not serve one the
    # other's route matrix (2 banks x 2 rows, then indexed at bank 11, row 5)
    from dataclasses import replace

    from loom.arch.noc import bank_read_peak

    full = replace(load_arch("wormhole_n150"), name="one name")
    small = replace(full, grid_y=2, worker_noc_y=full.worker_noc_y[:2])
    small = replace(small, dram=replace(small.dram, banks=small.dram.banks[:2]))
    assert small.key != full.key and replace(full, name="one name").key == full.key
    assert bank_read_peak(small, 0, (((1, 0), (0, 1)),)) > 0
    assert bank_read_peak(full, 0, (((5, 0), (0, 11)),)) > 0
