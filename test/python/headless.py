"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: no port).

``with Chromium(binary) as browser: page = browser.open(url)``; then ``page.evaluate(js)``,
``page.wait_for(js)`` and ``page.screenshot(path)``; ``flags`` adds command-line switches (WebGPU needs
``--enable-unsafe-webgpu``). Messages are JSON separated by NUL bytes: the
browser reads commands on fd 3 and writes replies and events on fd 4.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


class Chromium:
    """A headless browser process with a DevTools connection."""

    def __init__(
        self, binary: str, width: int = 1000, height: int = 720, flags: tuple[str, ...] = ()
    ) -> None:
        to_browser, self._commands = os.pipe()
        self._replies, from_browser = os.pipe()

        def wire() -> None:  # in the child: the protocol's fixed descriptors, kept across exec
            high = [os.dup(to_browser), os.dup(from_browser)]  # neither may be clobbered by the other
            for fd, want in zip(high, (3, 4)):
                os.dup2(fd, want, inheritable=True)

        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe"]
        self._profile = tempfile.mkdtemp(prefix="relax_chromium_")
        args += [f"--window-size={width},{height}", "--no-first-run", f"--user-data-dir={self._profile}"]
        args += list(flags)
        self.process = subprocess.Popen(
            [*args, "about:blank"],
            preexec_fn=wire,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:  # noqa: BLE001 (closing anyway)
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        os.close(self._replies)
        shutil.rmtree(self._profile, ignore_errors=True)

    def send(
        self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60
    ) -> Any:
        """Send a command and return its result; RuntimeError for a protocol error."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buffer:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no reply to {method} in {timeout} s")
                chunk = os.read(self._replies, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"chromium closed the DevTools pipe (exit {self.process.poll()})")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def open(self, url: str) -> Page:
        target = self.send("Target.createTarget", {"url": url})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, session)


class Page:
    """One tab."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser, self.session = browser, session

    def evaluate(self, expression: str) -> Any:
        result = self.browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 120) -> Any:
        """Poll ``expression`` until it is truthy (exceptions count as not yet: the page may still load)."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError as e:
                value, last = None, e
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"{expression} stayed falsy for {timeout} s (last: {last})")

    def screenshot(self, path: Path) -> Path:
        data = self.browser.send("Page.captureScreenshot", {"format": "png"}, self.session)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path
