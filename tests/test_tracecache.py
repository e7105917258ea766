"""The on-disk Tile IR cache: keys, round trip, atomic writes, damaged entries."""

from __future__ import annotations

from pathlib import Path

from loom.pipeline import Traced
from loom.tracecache import KernelFile, TraceCache, cache_key, kernel_file


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
