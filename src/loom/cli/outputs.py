"""Safe outputs: nothing the user owns is deleted or overwritten without ``--force``.

Every output is checked before any work starts (:func:`check_dump_dir`,
:func:`check_output_file`), then written at the end into a fresh temporary folder or file
*beside* the target and renamed into place (:func:`write_dump`, :func:`write_file`), so a
failure leaves either the old target or the complete new one, never a mixture, and no
temporary file behind.

A dump folder Loom wrote carries a marker file listing its artifacts; Loom replaces such
a folder only while it holds nothing but those artifacts, so a file the user put there is
never lost.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from loom.errors import OutputError, UsageError

MARKER = ".loom-artifacts"
"""Name of the file, inside a dump folder, that lists what Loom wrote there."""


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(".")


def _check_writable_parent(path: Path, option: str) -> None:
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise OutputError(
            f"{option} {str(path)!r} cannot be created: {str(base)!r} is a file, not a "
            "folder; choose another path."
        )
    try:  # a real probe: permission bits do not tell (root, read-only mounts, /proc)
        os.rmdir(tempfile.mkdtemp(prefix=".loom-probe.", dir=base))
    except OSError as err:
        raise OutputError(
            f"{option} {str(path)!r} cannot be written: creating a file in {str(base)!r} "
            f"fails ({err.strerror or err}); choose a writable path."
        ) from None


def _owned_names(folder: Path) -> set[str] | None:
    """The names Loom wrote into `folder`, or None when Loom did not create it."""
    marker = folder / MARKER
    if not marker.is_file():
        return None
    try:
        return {line for line in marker.read_text(encoding="utf-8").splitlines() if line}
    except (OSError, UnicodeDecodeError):
        return None


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it (both resolved)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def check_dump_dir(dump_dir: str, inputs: Iterable[str], force: bool) -> None:
    """Refuse, before any work, a dump folder whose replacement would lose a user's file."""
    target = Path(dump_dir).resolve()
    for source in inputs:
        if inside(Path(source).resolve(), target):
            raise OutputError(
                f"--dump-dir {dump_dir!r} holds the input {source!r}, which writing the "
                "artifacts would replace; choose another folder."
            )
    if inside(Path.cwd().resolve(), target):
        raise OutputError(
            f"--dump-dir {dump_dir!r} is the current folder (or contains it); Loom replaces "
            "the whole dump folder, so give a new folder such as out/gemm."
        )
    _check_writable_parent(target, "--dump-dir")
    if not target.exists():
        return
    if not target.is_dir():
        raise OutputError(
            f"--dump-dir {dump_dir!r} is an existing file, not a folder; choose another path."
        )
    if force:
        return
    entries = sorted(p.name for p in target.iterdir())
    if not entries:
        return
    owned = _owned_names(target)
    if owned is None:
        raise OutputError(
            f"--dump-dir {dump_dir!r} is a non-empty folder Loom did not create "
            f"({len(entries)} entries, e.g. {entries[0]!r}); Loom would replace it. Choose a "
            "new folder, or pass --force to replace it."
        )
    foreign = [name for name in entries if name not in owned and name != MARKER]
    if foreign:
        raise OutputError(
            f"--dump-dir {dump_dir!r} holds files Loom did not write ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}); move them, choose a new folder, or pass "
            "--force to replace the folder."
        )


def check_output_file(path: str, option: str, inputs: Iterable[str], force: bool) -> None:
    """Refuse, before any work, an output file that is an input or an existing file."""
    target = Path(path).resolve()
    for source in inputs:
        if Path(source).resolve() == target:
            raise OutputError(
                f"{option} {path!r} is also an input of this command; writing it would "
                "destroy the input. Choose another file name."
            )
    if target.is_dir():
        raise OutputError(f"{option} {path!r} is a folder; give a file name such as trace.json.")
    _check_writable_parent(target, option)
    if target.exists() and not force:
        raise OutputError(
            f"{option} {path!r} already exists; choose a new file name, or pass --force to "
            "overwrite it."
        )


def write_file(path: str, text: str) -> None:
    """Write `text` to a temporary file beside `path` and rename it into place."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(staging, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)


def write_dump(dump_dir: str | None, artifacts: Mapping[str, str]) -> None:
    """Write all artifacts into a fresh folder beside `dump_dir`, then swap it into place
    (nothing when no dump folder was asked for)."""
    if not dump_dir:
        return
    target = Path(dump_dir).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    old: Path | None = None
    try:
        for name, text in artifacts.items():
            (staging / name).write_text(text, encoding="utf-8")
        (staging / MARKER).write_text("".join(f"{n}\n" for n in sorted(artifacts)))
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rmdir(old)
            os.rename(target, old)
        try:
            os.rename(staging, target)
        except OSError:
            if old is not None:
                os.rename(old, target)
                old = None
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _inputs(args: argparse.Namespace) -> list[str]:
    """The user's files this command reads (outputs must never replace them)."""
    found = []
    for name in ("kernel", "schedule", "arch"):
        value = getattr(args, name, None)
        if value and Path(value).exists():
            found.append(str(value))
    return found


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse unsafe output paths before any work starts."""
    force = getattr(args, "force", False)
    if getattr(args, "dump_dir", None):
        check_dump_dir(args.dump_dir, _inputs(args), force)
    for option in ("trace", "html"):
        path = getattr(args, option, None)
        if not path:
            continue
        check_output_file(path, f"--{option}", _inputs(args), force)
        dump = getattr(args, "dump_dir", None)
        if dump and inside(Path(path), Path(dump)):
            raise UsageError(
                f"--{option} {path!r} lies inside --dump-dir {dump!r}, which is replaced as "
                f"a whole; put the {option} file elsewhere."
            )


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write through a temporary file beside `path`, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
