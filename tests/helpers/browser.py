"""Just enough of the Chrome DevTools protocol to drive Debian's headless chromium from a test.

Why not --dump-dom: JupyterLab renders after many round trips, and a virtual-time budget says
nothing about when the file browser or nbgrader's panel exist. Polling the live DOM does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .net import free_port

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--remote-allow-origins=*",
    "--window-size=1400,900",
)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One tab: evaluate JavaScript and wait for conditions in it."""

    def __init__(self, ws_url: str) -> None:
        import websocket  # websocket-client, locked in requirements/dev.lock

        self._ws = websocket.create_connection(ws_url, timeout=30)
        self._next = 0

    def call(self, method: str, **params: Any) -> dict:
        self._next += 1
        self._ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            reply = json.loads(self._ws.recv())
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(
                f"{expression[:120]}: {details.get('exception', {}).get('description', details.get('text'))}"
            )
        return result["result"].get("value")

    def wait_for(self, expression: str, what: str, timeout: float = 60.0) -> Any:
        """Poll until ``expression`` is truthy; on timeout say what was awaited and what the page shows."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.25)
        title = self.eval("document.title")
        text = self.eval("document.body ? document.body.innerText.slice(0, 300) : ''")
        raise AssertionError(f"{what} did not appear within {timeout:.0f} s; page {title!r} shows: {text!r}")

    def click(self, selector_js: str) -> None:
        """Click the centre of the element ``selector_js`` evaluates to, as a mouse would."""
        box = self.eval(
            f"(() => {{ const r = ({selector_js}).getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=box[0], y=box[1])  # Lumino wants a hover
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def close(self) -> None:
        self._ws.close()


@contextmanager
def chromium(url: str) -> Iterator[Page]:
    """A headless chromium with a fresh profile, showing ``url``; always killed afterwards."""
    path = chromium_path()
    if path is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="jaxcourse-chromium-", ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(
            [path, *FLAGS, f"--user-data-dir={profile}", f"--remote-debugging-port={port}", url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        page = None
        try:
            page = Page(_page_socket(port))
            yield page
        finally:
            if page is not None:
                page.close()
            proc.kill()
            proc.wait()


def _page_socket(port: int, timeout: float = 30.0) -> str:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as reply:
                pages = [t for t in json.load(reply) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"chromium's DevTools endpoint on port {port} did not answer within {timeout:.0f} s")
