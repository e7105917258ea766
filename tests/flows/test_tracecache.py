"""The on-disk Tile IR cache: keys, round trip, atomic writes, damaged entries."""

from __future__ import annotations

from pathlib import Path

from loom.flows.helion import Traced
from loom.flows.tracecache import KernelFile, TraceCache, cache_key, kernel_file


def test_shipped_kernel_source_is_read_without_importing_it() -> None:
    f = kernel_file("gemm")
    assert f.path.name == "gemm.py" and "@helion.kernel" in f.text


def test_key_depends_on_source_and_shape() -> None:
    a = KernelFile("k", Path("k.py"), "source one")
    b = KernelFile("k", Path("k.py"), "source two")
    assert cache_key(a, "M=1") == cache_key(a, "M=1") == cache_key(a, " M=1")
    assert cache_key(a, "M=1") != cache_key(a, "M=2")
    assert cache_key(a, "M=1") != cache_key(b, "M=1")
    assert cache_key(a, "M=1", "bfp8") != cache_key(a, "M=1")  # --dtype retypes the IR


def test_round_trip_and_damaged_entries(tmp_path: Path, tile_programs) -> None:  # type: ignore[no-untyped-def]
    cache = TraceCache(tmp_path / "cache")
    traced = Traced("gemm", {"M": 256, "N": 512, "K": 128}, tile_programs["gemm"], 7)
    assert cache.load("abc") is None
    cache.store("abc", traced)
    assert cache.load("abc") == traced
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["abc.pickle"]  # no temp left
    cache.entry("abc").write_bytes(b"not a pickle")
    assert cache.load("abc") is None


def test_unwritable_cache_is_skipped(tmp_path: Path, tile_programs) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = TraceCache(blocker / "cache")  # a folder under a file cannot exist
    cache.store("abc", Traced("gemm", {}, tile_programs["gemm"], 0))
    assert cache.load("abc") is None


def test_concurrent_writers_leave_one_whole_entry(tmp_path: Path, tile_programs) -> None:  # type: ignore[no-untyped-def]
    from concurrent.futures import ThreadPoolExecutor

    cache = TraceCache(tmp_path)
    traced = Traced("gemm", {"M": 256, "N": 512, "K": 128}, tile_programs["gemm"], 7)
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: cache.store("k", traced), range(16)))
    assert cache.load("k") == traced
    assert [p.name for p in tmp_path.iterdir()] == ["k.pickle"]


def test_compile_key_follows_every_input_but_the_job_count(wormhole) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from loom.flows.helion import CompileOptions
    from loom.flows.tracecache import compile_key

    base = CompileOptions(arch=wormhole, shape={"M": 256, "N": 512, "K": 128})
    key = compile_key("trace", base)
    assert key == compile_key("trace", dataclasses.replace(base, jobs=7))
    assert key != compile_key("other trace", base)
    changed = (
        dataclasses.replace(base, shape={"M": 512, "N": 512, "K": 128}),
        dataclasses.replace(base, top_k=3),
        dataclasses.replace(base, solver="enumerate"),
        dataclasses.replace(base, math_fidelity="LoFi"),
        dataclasses.replace(base, arch=dataclasses.replace(wormhole, clock_ghz=1.1)),
    )
    assert len({compile_key("trace", o) for o in changed} | {key}) == len(changed) + 1


def test_warm_compile_reuses_the_result(tmp_path: Path, tile_programs, wormhole) -> None:  # type: ignore[no-untyped-def]
    from loom.flows.cached import LazyKernel, compile_cached
    from loom.flows.helion import CompileOptions, CompileResult

    shape = {"M": 256, "N": 512, "K": 128}
    cache = TraceCache(tmp_path)
    key = cache_key(kernel_file("gemm"), "M=256,N=512,K=128;;;")
    cache.store(key, Traced("gemm", shape, tile_programs["gemm"], 2 * 256 * 512 * 128))

    def options(s: dict[str, int]) -> CompileOptions:
        return CompileOptions(arch=wormhole, shape=s, jobs=1)

    first_kernel, again_kernel = LazyKernel.of_file("gemm"), LazyKernel.of_file("gemm")
    first = compile_cached(first_kernel, "M=256,N=512,K=128", options, cache, None)
    again = compile_cached(again_kernel, "M=256,N=512,K=128", options, cache, None)
    assert not first_kernel.reused and again_kernel.reused
    assert again.schedule == first.schedule and again.lowered.source == first.lowered.source
    assert again.ranking.solutions == first.ranking.solutions
    entries = sorted(p.name for p in tmp_path.iterdir())
    results = [e for e in entries if e.startswith("compile-")]  # the other is the trace
    assert len(entries) == 2 and len(results) == 1
    assert isinstance(cache.load(results[0].removesuffix(".pickle"), CompileResult), CompileResult)
    assert cache.load(results[0].removesuffix(".pickle")) is None  # not a Traced


def test_key_follows_the_shipped_kernels_a_kernel_imports(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The causal kernel runs `flash_attention.py`'s step: editing any shipped kernel is a
    new key, as editing the frontend is."""
    import shutil

    from loom.flows import tracecache

    root = tmp_path / "loom"
    for package in tracecache._TRACED_PACKAGES:
        (root / package).mkdir(parents=True)
    shutil.copy(tracecache._LOOM_ROOT / "kernels" / "flash_attention.py", root / "kernels")
    monkeypatch.setattr(tracecache, "_LOOM_ROOT", root)
    causal = KernelFile("flash_attention_causal", Path("c.py"), "from loom.kernels import ...")
    tracecache._versions.cache_clear()
    before = cache_key(causal, "B=1")
    (root / "kernels" / "flash_attention.py").write_text("# the step changed\n")
    tracecache._versions.cache_clear()
    assert cache_key(causal, "B=1") != before
    tracecache._versions.cache_clear()
