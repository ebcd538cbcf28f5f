"""Open a built page in headless Chromium, fail on any console error, write its screenshot.

``python docs/check_site.py PAGE.html SCREENSHOT.png`` (``make docs`` runs it on the site's index).
Chromium is driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``: file
descriptors 3 and 4, messages separated by NUL), so the check needs nothing beyond the standard
library and Debian's chromium. Chromium's own ``--enable-logging`` prints every console message
at one level; the protocol says which are errors.

What fails the check, each printed on one line: an uncaught exception, ``console.error`` or
``console.assert``, and a browser log entry at level error (a script, style sheet or image that
did not load). Informational messages (the theme's ``console.log`` of its colour mode) are not
errors.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The flags of the Makefile's ``screenshot`` target (a quiet, offline, reproducible Chromium).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
WIDTH, HEIGHT = 1280, 900
#: Seconds to wait for the page's load event, and for late messages after it.
LOAD_TIMEOUT, SETTLE = 60.0, 2.0


class DevTools:
    """A minimal client of the DevTools protocol over Chromium's debugging pipe."""

    def __init__(self, page_dir: str):
        chromium = shutil.which("chromium")
        if chromium is None:
            sys.exit("check_site: Debian's chromium is needed: run `make browser`.")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def child_fds():  # the pipe's ends become the child's 3 and 4, whatever their numbers here
            commands, replies = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.process = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={page_dir}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), preexec_fn=child_fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait(self, seconds: float, until: str | None = None) -> None:
        """Collect events for ``seconds`` or until the event ``until`` arrives."""
        import select

        if until and any(event.get("method") == until for event in self.events):
            return
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            buffered = b"\0" in self._buffer  # messages already read arrive without a select
            if not buffered and not select.select([self._from_chrome], [], [], left)[0]:
                break
            event = self._read()
            self.events.append(event)
            if until and event.get("method") == until:
                return

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its debugging pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except RuntimeError:
            pass
        self.process.wait(timeout=30)


def console_errors(events: list[dict]) -> list[str]:
    """The console errors among the protocol's events, one line each."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            found.append(f"uncaught: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
            found.append(f"console.{params['type']}: {text}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            entry = params["entry"]
            found.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".rstrip())
    return found


def check(page: Path, screenshot: Path) -> list[str]:
    """Load ``page``, write its screenshot to ``screenshot`` and return its console errors."""
    with tempfile.TemporaryDirectory() as profile:
        browser = DevTools(profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                browser.send(f"{domain}.enable", session=session)
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}, session=session)
            browser.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
            browser.wait(LOAD_TIMEOUT, until="Page.loadEventFired")
            browser.wait(SETTLE)
            image = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
            screenshot.write_bytes(base64.b64decode(image))
        finally:
            browser.close()
    return console_errors(browser.events)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    page, screenshot = Path(argv[0]), Path(argv[1])
    if not page.is_file():
        print(f"check_site: {page} does not exist: build the site first (make docs)", file=sys.stderr)
        return 2
    errors = check(page, screenshot)
    for line in errors:
        print(f"check_site: {page}: {line}", file=sys.stderr)
    if errors:
        return 1
    print(f"check_site: {page} rendered with no console error; screenshot {screenshot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
