"""Tools for the report tests - a real headless browser, and poppler for PDFs - and tests of those tools.

The browser: Debian's chromium driven over the Chrome DevTools Protocol.

The protocol runs over --remote-debugging-pipe (JSON messages separated by NUL on file descriptors 3 and 4), so no
websocket client is needed. `open_page` loads a file, records console messages, exceptions, log entries and every
request, draws every plot and returns what a test checks. The tests in this file check the checker itself on small
pages with known faults.
"""

import atexit
import base64
import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PAGE_TIMEOUT_S = 90.0

# Every plot: drawn when it has plotly's SVG layer with at least one trace drawn, or a WebGL canvas (3D).
PLOTS_JS = """
(async () => {
  if (window.ptsbenchDrawAll) { await window.ptsbenchDrawAll(); }
  await new Promise(resolve => setTimeout(resolve, 300));
  return JSON.stringify(Array.from(document.querySelectorAll('.plot')).map(element => {
    const box = element.getBoundingClientRect();
    return {
      id: element.id,
      traces: (element._fullData || []).length,
      svg: !!element.querySelector('svg.main-svg'),
      drawn: element.querySelectorAll('.scatterlayer .trace path.js-line, .scatterlayer .trace path.point, ' +
                                       '.barlayer .trace .point path, .heatmaplayer image').length,
      canvas: Array.from(element.querySelectorAll('canvas')).some(c => c.width > 0 && c.height > 0),
      gl: element.classList.contains('gl'),
      nogl: !!element.querySelector('.nogl'),
      // the y axis title left of every y tick label (not written over them)
      yTitleClear: (() => {
        const title = element.querySelector('.ytitle');
        const ticks = Array.from(element.querySelectorAll('.yaxislayer-above .ytick text'));
        if (!title || !ticks.length) { return true; }
        const right = title.getBoundingClientRect().right;
        return ticks.every(tick => tick.getBoundingClientRect().left >= right - 0.5);
      })(),
      x: box.left + window.scrollX, y: box.top + window.scrollY, width: box.width, height: box.height,
    };
  }));
})()
"""


@dataclass
class PageResult:
    """What the browser saw."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    plots: list[dict[str, Any]] = field(default_factory=list)
    screenshot_png: bytes = b""
    plot_shots: dict[str, bytes] = field(default_factory=dict)
    title: str = ""
    text: str = ""
    script_result: Any = None

    @property
    def errors(self) -> list[str]:
        return self.console_errors + self.exceptions + self.log_errors

    @property
    def network_requests(self) -> list[str]:
        """Requests that leave the machine or the file itself: anything but the page, data: and blob: URLs."""
        return [url for url in self.requests if url != self.url and not url.startswith(("data:", "blob:"))]


class Browser:
    """One headless chromium process; messages go to fd 3 and come back on fd 4."""

    def __init__(self, profile_dir: Path) -> None:
        if not os.path.exists(CHROMIUM):
            pytest.skip("chromium is not installed (apt-get install chromium)")
        command_read, self._command_write = os.pipe()
        self._reply_read, reply_write = os.pipe()

        def on_fds() -> None:
            os.dup2(command_read, 3)
            os.dup2(reply_write, 4)

        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--no-first-run",
             "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
             "--disable-gpu-compositing",
             f"--user-data-dir={profile_dir}", "--window-size=1400,1000", "about:blank"],
            preexec_fn=on_fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(command_read)
        os.close(reply_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout_s: float = PAGE_TIMEOUT_S) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._command_write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result
            self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._reply_read], [], [], left)
            if ready:
                chunk = os.read(self._reply_read, 1 << 20)
                if not chunk:
                    raise EOFError("the browser closed its pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def wait_for(self, method: str, session: str, timeout_s: float = PAGE_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
            self.events.append(self._read(deadline))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, EOFError, OSError):
            self.send("Browser.close", timeout_s=10)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._command_write)
        os.close(self._reply_read)

    def open_page(self, path: Path, shoot_plots: bool = False, script: str = "", width_px: int | None = None,
                  javascript: bool = True, media: str = "") -> PageResult:
        """Load `path`, draw every plot, and collect errors, requests, plot states and screenshots; `script`: a
        JavaScript expression evaluated after the plots are drawn, its JSON text in `script_result`; `width_px`:
        the window's width (else the browser's 1400 px); `javascript`: False to load the page with its scripts
        disabled (the test's own expressions still run); `media`: "print" to lay the page out as printed."""
        url = path.resolve().as_uri()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        if width_px is not None:
            self.send("Emulation.setDeviceMetricsOverride", {"width": width_px, "height": 1000,
                                                             "deviceScaleFactor": 1, "mobile": False},
                      session=session)
        if not javascript:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
        if media:
            self.send("Emulation.setEmulatedMedia", {"media": media}, session=session)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        result = PageResult(url)
        evaluated = self.send("Runtime.evaluate", {"expression": PLOTS_JS if javascript else "'[]'",  # no timers
                                                   "awaitPromise": True, "returnByValue": True}, session=session)
        if "exceptionDetails" in evaluated:
            result.exceptions.append(json.dumps(evaluated["exceptionDetails"])[:500])
        else:
            result.plots = json.loads(evaluated["result"]["value"])
        if script:
            found = self.send("Runtime.evaluate", {"expression": script, "returnByValue": True}, session=session)
            result.script_result = json.loads(found["result"]["value"])
        text_js = "JSON.stringify([document.title, document.body.innerText])"
        facts = self.send("Runtime.evaluate", {"expression": text_js, "returnByValue": True}, session=session)
        result.title, result.text = json.loads(facts["result"]["value"])
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)
        result.screenshot_png = base64.b64decode(shot["data"])
        if shoot_plots:
            for plot in result.plots:
                clip = {key: plot[key] for key in ("x", "y", "width", "height")} | {"scale": 1}
                image = self.send("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                             "captureBeyondViewport": True}, session=session)
                result.plot_shots[plot["id"]] = base64.b64decode(image["data"])
        self._collect(result, session)
        self.send("Target.closeTarget", {"targetId": target})
        return result

    def _collect(self, result: PageResult, session: str) -> None:
        for event in self.events:
            if event.get("sessionId") != session:
                continue
            params = event.get("params", {})
            method = event.get("method")
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                result.console_errors.append(json.dumps(params.get("args"))[:300])
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                result.exceptions.append(str((details.get("exception") or {}).get("description") or details))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                result.log_errors.append(params["entry"].get("text", "")[:300])
            elif method == "Network.requestWillBeSent":
                result.requests.append(params["request"]["url"])


_SHARED: list[Browser] = []


def shared_browser(profile_dir: Path) -> Browser:
    """One browser for the whole test session (report test modules import the `browser` fixture from here)."""
    if not _SHARED:
        _SHARED.append(Browser(profile_dir))
        atexit.register(_SHARED[0].close)
    return _SHARED[0]


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def image_colors(png: bytes) -> tuple[int, float]:
    """(number of distinct colours, share of pixels that are not the most common colour) of a PNG."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 24) or []
    total = image.width * image.height
    most = max((count for count, _ in colors), default=total)
    return len(colors), 1 - most / total


def pdf_text(path: Path) -> str:
    """The PDF's text as poppler's pdftotext lays it out (skips when poppler-utils is not installed)."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is not installed (apt-get install poppler-utils)")
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


def pdf_pages(path: Path) -> int:
    """The PDF's page count as poppler's pdfinfo reads it."""
    if shutil.which("pdfinfo") is None:
        pytest.skip("pdfinfo is not installed (apt-get install poppler-utils)")
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[1] for line in info.splitlines() if line.startswith("Pages:")))


def assert_clean_report_page(result: PageResult, expected_plots: int) -> None:
    """The checks every report page must pass in a real browser."""
    assert result.errors == [], result.errors
    assert result.network_requests == [], result.network_requests
    assert len(result.plots) == expected_plots
    assert [plot["id"] for plot in result.plots if not plot["yTitleClear"]] == []
    for plot in result.plots:
        assert plot["traces"] > 0 and plot["svg"], plot
        assert plot["canvas"] if plot["gl"] else plot["drawn"] > 0, plot
    colors, ink = image_colors(result.screenshot_png)
    assert colors > 20 and ink > 0.02, (colors, ink)


# --- the checker, checked ---------------------------------------------------------------------------------------


def test_browser_sees_console_errors_exceptions_and_network_requests(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><title>bad</title></head><body><h1>bad page</h1>"
                    "<img src='http://192.0.2.1/x.png'><script>console.error('boom'); undefinedCall();</script>"
                    "</body></html>")
    result = browser.open_page(page)
    assert result.title == "bad" and "bad page" in result.text
    assert any("boom" in error for error in result.console_errors)
    assert any("undefinedCall" in error for error in result.exceptions)
    assert "http://192.0.2.1/x.png" in result.network_requests


def test_browser_sees_a_blank_page_as_blank(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>")
    result = browser.open_page(page)
    assert result.errors == [] and result.network_requests == [] and result.plots == []
    colors, ink = image_colors(result.screenshot_png)
    assert colors == 1 and ink == 0.0
