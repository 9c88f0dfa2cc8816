"""Headless Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe): no
websocket client, no driver package. Emulates a device width (headless windows are never
narrower than 500 px), measures the page with a script, takes full-page screenshots."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

NAMES = ("chromium", "chromium-browser")


def browser() -> str:
    """The chromium binary; the run stops in one line where it is missing (CI installs
    it with .ci/chromium): a layout test never skips."""
    found = next((path for path in map(shutil.which, NAMES) if path), None)
    if found is None:
        pytest.exit(
            "the report layout tests need Debian's chromium: run .ci/chromium "
            "(apt-get install chromium)",
            returncode=1,
        )
    return found


class Chromium:
    """One headless browser and one page, driven by DevTools commands on fds 3 and 4."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="report-chromium-")
        to_browser, self._commands = os.pipe()
        self._events, from_browser = os.pipe()

        def fds() -> None:  # the browser reads commands on fd 3, answers on fd 4
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.process = subprocess.Popen(
            [
                browser(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._id = 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.send("Page.enable", session=True)

    def send(self, method: str, session: bool = False, **params: Any) -> dict:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._events, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def open(self, path: Path, width: int, height: int = 900) -> None:
        """path at a device `width` px wide (a phone below 600 px: the viewport tag
        matters there, as on a real one), once loaded."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )
        self.send("Page.navigate", session=True, url=path.resolve().as_uri())
        while self._read().get("method") != "Page.loadEventFired":
            pass

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, target: Path) -> None:
        """The whole page, as tall as its content, as PNG."""
        self.send(
            "Page.captureScreenshot", session=True, format="png", captureBeyondViewport=False
        )  # settles layout before the page's size is read
        size = self.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        data = self.send(
            "Page.captureScreenshot",
            session=True,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1},
        )["data"]
        target.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        os.close(self._events)
        shutil.rmtree(self.profile, ignore_errors=True)
