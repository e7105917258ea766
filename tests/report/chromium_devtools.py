"""A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe` (no extra
dependency): Chromium reads commands from its fd 3 and writes replies and events to its
fd 4, as JSON messages ended by a NUL byte. Enough to open a page, collect every console
call, uncaught exception and browser log entry, evaluate JavaScript and take a
full-page screenshot."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any


class DevToolsError(RuntimeError):
    pass


class Browser:
    """Headless Chromium driven over the DevTools pipe; use as a context manager."""

    def __init__(self, chromium: str, profile: Path, timeout: float = 120.0) -> None:
        self.timeout = timeout
        to_child_r, self._write = os.pipe()
        self._read, from_child_w = os.pipe()
        command = [
            chromium,
            "--headless",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            "about:blank",
        ]

        def child_fds() -> None:
            """In the child: our pipe ends become its fds 3 (commands) and 4 (replies)."""
            inp = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            out = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(inp, 3)
            os.dup2(out, 4)

        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,  # fds 3 and 4 made in child_fds are inherited; ours are not
            preexec_fn=child_fds,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(DevToolsError, OSError):
            self.call("Browser.close", session=False)
        for fd in (self._write, self._read):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DevToolsError("Chromium did not answer in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise DevToolsError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, session: bool = True, **params: Any) -> dict[str, Any]:
        """Send a command (to the page's session unless `session` is False) and return
        its result; events that arrive meanwhile are kept in `events`."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise DevToolsError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while True:
            event = self._message(deadline)
            if "method" in event:
                self.events.append(event)
                if event["method"] == method:
                    return event

    def open(self, url: str, width: int = 1280) -> None:
        """A new page, with console, exception and log reporting on, loaded from `url`."""
        target = self.call("Target.createTarget", session=False, url="about:blank")
        attached = self.call(
            "Target.attachToTarget", session=False, targetId=target["targetId"], flatten=True
        )
        self.session = attached["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width, height=900, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def console(self) -> list[str]:
        """Every console call, uncaught exception and browser log entry (a resource that
        failed to load, a security violation) seen so far, in words."""
        found = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
                found.append(f"console.{p['type']}: {text}")
            elif e["method"] == "Runtime.exceptionThrown":
                details = p["exceptionDetails"]
                thrown = details.get("exception", {}).get("description", "")
                found.append(f"exception: {details.get('text', '')} {thrown}".strip())
            elif e["method"] == "Log.entryAdded":
                entry = p["entry"]
                found.append(f"log {entry['level']} ({entry['source']}): {entry['text']}")
        return found

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """The whole page (not only the window) as a PNG."""
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))
