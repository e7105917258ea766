"""TTNN's scaled-dot-product attention defaults as Schedules of the shipped kernels.

`ttnn-sdpa` (flash attention, no program config). Source: tenstorrent/tt-metal
``ttnn/cpp/ttnn/operations/transformer/sdpa/device/sdpa_program_factory.cpp`` @
000e7c053de83f4dd8bb52da5aa09bda2ead7ce4 (the rule unchanged since cf4b348): chunk sizes
default to ``q_chunk_size = k_chunk_size = 32``; the whole grid is used and the work is
split over batch, then heads, then query chunks, in that order::

    batch_parallel_factor = min(B, cores)
    nh_parallel_factor    = min(cores / batch_parallel_factor, NH)
    q_parallel_factor     = min(cores / (batch_pf * nh_pf), q_num_chunks)

each core taking ``ceil(B / bpf)`` batches x ``ceil(NH / nhpf)`` heads x
``ceil(q_chunks / qpf)`` query chunks, cores numbered row-major (``core = (i % grid_x,
i / grid_x)``). K and V are double-buffered, Q double-buffered when a core has more than
one query chunk.

K/V movement (`loom.baselines.sdpa_chains` has the rule and its sources). Non-causal runs
chain the cores that share a head: one injector per head reads each K/V chunk from DRAM
and it travels along the chain (store and forward), or is multicast along the row when
every chain qualifies. Loom's schedule says this with `Policy.multicast` on ``k`` and
``v``: each group of cores that shares a head (the ``tile_m`` levels, innermost on both
dims) is sent every chunk from one DRAM read. The view is the one closest to TTNN's
placement: fewest query chunks per core, then the number of K/V DRAM streams nearest
TTNN's (a head's chain reads K/V once per query chunk of its injector), fewest cores,
then a head's cores along a row as TTNN numbers them. Where the two differ:

- the chains multicast (Wormhole 8x8, the evaluation's shapes): TTNN's placement itself
  (a head's cores side by side in one row, one multicast per chunk, the same DRAM reads
  and NoC bytes); only the sender differs: TTNN spreads the injectors over columns
  (physical x furthest from the earlier ones), Loom sends from each group's corner (NoC0:
  first core, NoC1: last), so its senders stand in fewer columns and may crowd the same
  links: if anything against the baseline, a small effect;
- the chains store and forward (heads across two rows on the 13-wide Blackhole grid, or
  unequal query-chunk counts, so every evaluation shape on 13x10): Loom has no chain, so
  it multicasts over the head's cores laid out as a rectangle (3 x 5 there, a 2-D
  multicast where TTNN's chain runs along a row and wraps). DRAM reads are TTNN's (or
  fewer, where no view with TTNN's per-core work has as many groups as TTNN has chains:
  B=2, S=960 on 13x10 reads half), but each chunk crosses a multicast tree instead of
  one hop per chain core, and no core waits for its predecessor's copy: no
  store-and-forward hop latency and no forwarding writes on the receivers' reader
  engines. All of it favours the baseline, so Loom's speed-up over it is if anything
  understated.

The causal kernel (`flash_attention_causal`, TTNN's ``is_causal=True``) builds no chain
(``if (!is_causal)``): each core reads its own K/V, as written here. Key chunks past a
query chunk's diagonal are skipped and the diagonal chunk is masked. TTNN's current SDPA
(`ZIGZAG_SOURCE`) deals the causal work as one flat list of (batch, head, query chunk)
blocks: each core of the grid takes a contiguous run of ``ceil(blocks / cores)`` of them
(core ``y * grid_x + x``), and each head's query chunks are visited in zigzag order (0,
N-1, 1, N-2, ...), so a run pairs light and heavy chunks (the older
``BALANCED_Q_PARALLEL`` pairing did the same where the chunks divided evenly). The
causal policy selects that deal (`Policy.deal` ``zigzag``, `loom.ir.schedule.DEALS`,
written by the lowering's `dealt_indices`) on every core of the grid, so its busiest core
does TTNN's block steps; Loom's round-robin over waves with padding chunks gave it up to
1.3x as many (the attention calibration's S=4096 rows on 11 x 10: 198 against 165).
Runs past the last block (cores TTNN leaves idle) take a padding head's first query
chunk, one key step each.

`ttnn-sdpa-decode` (flash decode, no program config). Source: tenstorrent/tt-metal
``ttnn/cpp/ttnn/operations/transformer/sdpa_decode/device/sdpa_decode_program_factory.cpp``
@ 043b5ac261d74cd5543a2d73edd684ac5446bdc1: with no program config the core cap is the
whole grid (``max_cores_per_head_batch``, 16 by default, applies only when a config is
passed), so ``cores_per_batch = cores / B``, ``cores_per_head = max(1, cores_per_batch /
KV heads)``, ``heads_per_core = max(1, ceil(KV heads / cores_per_batch))``; each head's KV
sequence is split over ``cores_per_head`` cores and the partial results reduced onto the
head's first core. The key chunk is chosen by the caller,
``ttnn/cpp/ttnn/operations/transformer/sdpa_decode/sdpa_decode.cpp`` @
050f24fa811f4f26798a78feaac8a319912f5f10 (``get_chunk_size``): the largest power of two
dividing the cache length, at most 512 (512 for every evaluation length). The shipped
kernel has one KV head per query head (no grouping).

Which engine reads K and V (both baselines). Sources: tenstorrent/tt-metal
``ttnn/cpp/ttnn/operations/transformer/sdpa/device/kernels/dataflow/reader_interleaved.cpp``
@ 008dd2ddd0dc3bb7154bc13d054b1902f1e2a5a5 and
``.../sdpa_decode/device/kernels/dataflow/reader_decode_all.cpp`` @
040a27c125587553626a7e57baa42571c8af91fa: one reader kernel reads Q, then for every key
chunk K into ``cb_k_in`` (c_1) and V into ``cb_v_in`` (c_2). The CBs are separate, the
producer is one: every K and V byte is requested by the reader RISC on its NoC, and the
writer kernel only gathers, reduces and stores. `Policy.load_engines` says so (Q, K and
V on the ``reader``), whatever engine order Loom's own plan would pick for the same
program. TTNN's causal mask tiles are made by its writer kernel (``writer_interleaved.cpp``,
``generate_mask``); the causal kernel here reads the tile indices its mask is computed
from, so those loads are put on the writer.
"""

from __future__ import annotations

import math
from fractions import Fraction

from loom.baselines.build import Policy, spread
from loom.baselines.sdpa_chains import CHAIN_SOURCE, ChainPlan, HeadWork, chain_plan, core_work
from loom.ir.scope import Scope

SDPA_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/"
    "sdpa_program_factory.cpp @ 000e7c053de83f4dd8bb52da5aa09bda2ead7ce4"
)
DECODE_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa_decode/device/"
    "sdpa_decode_program_factory.cpp @ 043b5ac261d74cd5543a2d73edd684ac5446bdc1; k_chunk "
    "from sdpa_decode/sdpa_decode.cpp @ 050f24fa811f4f26798a78feaac8a319912f5f10"
)
READER_SOURCES = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/kernels/dataflow/"
    "reader_interleaved.cpp @ 008dd2ddd0dc3bb7154bc13d054b1902f1e2a5a5; "
    "sdpa_decode/device/kernels/dataflow/reader_decode_all.cpp @ "
    "040a27c125587553626a7e57baa42571c8af91fa"
)
QKV_ON_READER = {"q": "reader", "k": "reader", "v": "reader"}
"""Both kernels read Q, K and V in their reader kernel (`READER_SOURCES`)."""
ZIGZAG_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/kernels/dataflow/"
    "reader_interleaved.cpp (global_q_start, global_q_count) and the SDPA kernels' "
    "linear_to_zigzag (stored versions of 2026)"
)
CAUSAL_KERNEL = "flash_attention_causal_ttnn"
"""The causal program TTNN's SDPA runs (`Policy.kernel`): one loop over the key chunks
up to the query chunk's end, as `sdpa_flash_attention.cpp` loops (its key chunk may be
longer than its query chunk); `sdpa_program.ttnn_softmax` drops the mask where it adds
none."""
MASK_ON_WRITER = {"tile_m_col_index": "writer", "tile_n_index": "writer"}
"""The causal kernel's mask inputs (the query and key tile indices the frontend reads from
DRAM): TTNN's writer kernel generates the causal mask tiles (`MASK_SOURCE`)."""
MASK_SOURCE = (
    "tenstorrent/tt-metal ttnn/cpp/ttnn/operations/transformer/sdpa/device/kernels/dataflow/"
    "writer_interleaved.cpp (generate_mask)"
)
Q_CHUNK = 32
K_CHUNK = 32
DECODE_MAX_K_CHUNK = 512

View = tuple[tuple[str, int, str], ...]


def sdpa_split(b: int, h: int, s: int, cores: int, q_chunk: int = Q_CHUNK) -> tuple[int, int, int]:
    """(batch, head, query-chunk) parallel factors of TTNN's SDPA (query chunks of
    `q_chunk` positions)."""
    q_chunks = math.ceil(s / q_chunk)
    bpf = min(b, cores)
    hpf = min(cores // bpf, h)
    qpf = min(cores // (bpf * hpf), q_chunks)
    return bpf, hpf, qpf


def kv_streams(plan: ChainPlan, work: tuple[tuple[HeadWork, ...], ...]) -> int:
    """K/V passes TTNN reads from DRAM: a chain's injector once per query chunk of its
    own, every core outside a chain once per query chunk of each head it works on."""
    chained = {c for chain in plan.chains for c in chain.cores}
    own = sum(w.q_count for core, items in enumerate(work) if core not in chained for w in items)
    return own + sum(chain.q_counts[0] for chain in plan.chains)


def _miss(a: int, b: int) -> Fraction:
    """How far apart two positive counts are, as a ratio >= 1."""
    return Fraction(max(a, b), min(a, b))


def grid_layout(
    rows: int, chunks: int, grid: tuple[int, int], q_cores: int = 1, streams: int = 0
) -> View:
    """The 2-D mapping of (B*H rows, query chunks) closest to TTNN's: fewest chunk-units
    per core; then, when `streams` (TTNN's K/V DRAM passes, > 0 when the K/V loads
    multicast over a head's cores) is given, the mapping whose multicast groups read K/V
    as often as TTNN (groups x units, nearest by ratio); then the number of cores per
    head nearest TTNN's `q_cores` (its query-parallel factor); then fewest cores; then a
    head's cores along rows (TTNN numbers cores row-major). A Loom mapping splits each grid
    axis over whole levels of x and y, so on grids whose width does not divide the split
    (13 x 10) the busiest core may get a little more than under TTNN (the notes say how
    much)."""
    gx, gy = grid
    best: tuple[tuple[int, Fraction, Fraction, int, int], tuple[int, int, int, int]] | None = None
    for xm in range(1, gx + 1):
        for xb in range(1, gx // xm + 1):
            for ym in range(1, gy + 1):
                for yb in range(1, gy // ym + 1):
                    units = math.ceil(rows / (xb * yb)) * math.ceil(chunks / (xm * ym))
                    miss = _miss(xb * yb * units, streams) if streams else Fraction(1)
                    key = (units, miss, _miss(xm * ym, q_cores), xm * xb * ym * yb, -xm)
                    if best is None or key < best[0]:
                        best = (key, (xm, xb, ym, yb))
    assert best is not None
    xm, xb, ym, yb = best[1]
    return (("x", xm, "tile_m"), ("x", xb, "tile_b"), ("y", ym, "tile_m"), ("y", yb, "tile_b"))


def _kv_note(plan: ChainPlan, view: View, streams: int, units: int) -> str:
    if not plan.chains:
        return "K/V: no chain (causal, or every head on one core): each core reads its own"
    sizes = sorted({len(c.cores) for c in plan.chains})
    span = "/".join(str(n) for n in sizes)
    group = {d: math.prod(n for dd, n, a in view if dd == d and a == "tile_m") for d in "yx"}
    groups = math.prod(n for _, n, a in view if a == "tile_b")
    loom = f"{group['y']}x{group['x']} cores per head, {groups * units} K/V DRAM passes"
    if plan.multicast:
        return (
            f"K/V: {len(plan.chains)} chain(s) of {span} core(s), each multicast along its "
            f"row from one DRAM read, {streams} K/V DRAM passes; here multicast over {loom}"
        )
    return (
        f"K/V: {len(plan.chains)} store-and-forward chain(s) of {span} core(s) ({plan.why_not}: "
        f"no multicast), {streams} K/V DRAM passes; here multicast over {loom} (no forwarding "
        "hops: favours the baseline)"
    )


def sdpa_policy(
    shape: dict[str, int],
    grid: tuple[int, int],
    causal: bool,
    noc_x: tuple[int, ...] | None = None,
    chunks: tuple[int, int] = (Q_CHUNK, K_CHUNK),
    name: str = "ttnn-sdpa",
    why: str = "",
) -> Policy:
    """`ttnn-sdpa` for the flash_attention kernels (grid axes: B*H rows, query tiles):
    `causal` for `flash_attention_causal` (no K/V chain); `noc_x` the physical x of each
    grid column (TTNN's injector choice, notes only). `chunks` are the program config's
    (q_chunk_size, k_chunk_size) (TTNN's 32 x 32 when none is passed), `name` the
    baseline's and `why` a note on where the chunks come from (the other attention
    baselines run the same rule with the chunks of a program config)."""
    gx, gy = grid
    b, h = shape["B"], shape["H"]
    q_chunk, k_chunk = chunks
    split = sdpa_split(b, h, shape["S"], gx * gy, q_chunk)
    q_chunks = math.ceil(shape["S"] / q_chunk)
    work = core_work(b, h, shape["S"], grid, q_chunk, split)
    plan = chain_plan(work, h, gx, causal, noc_x)
    ttnn_units = max(sum(w.q_count for w in items) for items in work)
    streams = kv_streams(plan, work) if plan.chains else 0
    if causal:  # TTNN's deal: contiguous zigzag runs of the flat (B*H, q-chunk) work
        view, deal = spread(gx * gy, gx, "tile_m"), "zigzag"
        units = math.ceil(b * h * q_chunks / (gx * gy))
    else:
        view, deal = grid_layout(b * h, q_chunks, grid, split[2], streams), ""
        cores = {"tile_m": 1, "tile_b": 1}
        for _, size, axis in view:
            cores[axis] *= size
        units = math.ceil(b * h / cores["tile_b"]) * math.ceil(q_chunks / cores["tile_m"])
    pipeline = {Scope("tile_n").key: {"b_load": 1}}
    if math.ceil(q_chunks / split[2]) > 1:
        pipeline[Scope.grid().key] = {"b_load": 1}
    bpf, hpf, qpf = split
    notes = (
        f"{name}: q_chunk {q_chunk} k_chunk {k_chunk}; parallel batch {bpf} x heads {hpf} "
        f"x q-chunks {qpf}; {ttnn_units} q-chunk(s) per core under TTNN, {units} in this "
        "mapping",
        *((why,) if why else ()),
        _kv_note(plan, view, streams, units),
        f"rule: {SDPA_SOURCE}"
        + (f"; deal: {ZIGZAG_SOURCE}" if causal else f"; chains: {CHAIN_SOURCE}"),
        f"Q, K and V read by the reader kernel: {READER_SOURCES}"
        + (f"; mask by the writer: {MASK_SOURCE}" if causal else ""),
    )
    blocks = {"tile_b": 1, "tile_m": q_chunk, "tile_n": k_chunk}
    multicast = ("k", "v") if plan.chains else ()
    engines = {**QKV_ON_READER, **(MASK_ON_WRITER if causal else {})}
    rewrites = ("ttnn_softmax", "generated_masks") if causal else ("ttnn_softmax",)
    return Policy(
        name, view, blocks, multicast, pipeline, notes, load_engines=engines, rewrites=rewrites,
        deal=deal, kernel=CAUSAL_KERNEL if causal else "",
    )  # fmt: skip


def decode_split(
    b: int, kv_heads: int, cores: int, max_per_head: int | None = None
) -> tuple[int, int, int]:
    """(cores per batch, cores per head, heads per core) of TTNN's SDPA decode on `cores`
    cores; `max_per_head` is a program config's ``max_cores_per_head_batch`` (None: no
    config, every core available to a batch)."""
    usable = cores if max_per_head is None else min(cores, max_per_head * b * kv_heads)
    per_batch = usable // b
    per_head = max(1, per_batch // kv_heads)
    heads_per_core = max(1, math.ceil(kv_heads / per_batch))
    return per_batch, per_head, heads_per_core


def decode_k_chunk(s: int) -> int:
    """TTNN's decode key chunk for a cache of `s` positions: the largest power of two
    dividing `s`, at most 512 (TTNN rejects an `s` whose chunk is under 32; 32 here)."""
    return max(K_CHUNK, min(DECODE_MAX_K_CHUNK, s & -s))


def decode_kv_split(s: int, per_head: int, k_chunk: int) -> tuple[int, int]:
    """(cores a head's cache is split over, positions per core) for `per_head` cores per
    head and key chunks of `k_chunk`: TTNN hands each core ``ceil(chunks / cores)``, so
    cores past the last such share are idle (and not counted)."""
    tile_s = math.ceil(s / min(per_head, math.ceil(s / k_chunk)) / k_chunk) * k_chunk
    return math.ceil(s / tile_s), tile_s


def sdpa_decode_policy(
    shape: dict[str, int],
    grid: tuple[int, int],
    k_chunk: int = 0,
    max_per_head: int | None = None,
    name: str = "ttnn-sdpa-decode",
    why: str = "",
    formats: str = "",
) -> Policy:
    """`ttnn-sdpa-decode` for the flash_decode kernel (grid axes: B*H rows, KV splits) on
    `grid`. The other decode baselines run the same rule with a program config's knobs:
    `k_chunk` (0: TTNN's choice for the length), `max_per_head` (its
    ``max_cores_per_head_batch``; None: no config), `formats` (the tensor formats the
    source runs, a ``--dtype`` spec); `name` is the baseline's, `why` a note on where the
    knobs come from."""
    gx, gy = grid
    b, h, s = shape["B"], shape["H"], shape["S"]
    per_batch, per_head, heads_per_core = decode_split(b, h, gx * gy, max_per_head)
    k_chunk = k_chunk or decode_k_chunk(s)
    split, tile_s = decode_kv_split(s, per_head, k_chunk)
    head_cores = b * math.ceil(h / heads_per_core) if split == 1 else b * h
    if split == 1:
        view = spread(min(head_cores, gx * gy), gx, "tile_b")
    else:
        # a head's cores as a rectangle: the widest divisor of the split along x
        sx = max(d for d in range(1, min(split, gx) + 1) if split % d == 0)
        sy = split // sx
        view = (
            ("x", sx, "tile_s"),
            ("y", sy, "tile_s"),
            ("x", max(1, gx // sx), "tile_b"),
            ("y", max(1, min(b * h, gy // sy)), "tile_b"),
        )
    notes = (
        f"{name}: k_chunk {k_chunk}; cores per batch {per_batch}, per head "
        f"{per_head}, heads per core {heads_per_core}; KV split over {split} core(s)"
        + (f"; formats {formats}" if formats else ""),
        *((why,) if why else ()),
        f"rule: {DECODE_SOURCE}",
        f"Q, K and V read by the reader kernel: {READER_SOURCES}",
    )
    blocks = {"tile_b": 1, "tile_s": tile_s, "tile_n": k_chunk}
    pipeline = {Scope("tile_n").key: {"b_load": 1}}
    engines = dict(QKV_ON_READER)
    return Policy(
        name, view, blocks, (), pipeline, notes, load_engines=engines, formats=formats,
        rewrites=("ttnn_softmax",),
    )  # fmt: skip
