"""A running app (streamlit run app.py, headless) and Debian's Chromium settings, for the browser
tests and the README screenshots."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app() -> Iterator[str]:
    """``streamlit run app.py`` on a free port until the block ends; yields its URL."""
    port = _free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 (a file, not a pipe: a full pipe stalls the server)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"streamlit did not start on {url}:\n{_tail(log)}")
            time.sleep(0.3)
        yield url
        if os.environ.get("FLATKV_APP_LOG"):
            print(_tail(log, 20_000))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _tail(log, size: int = 2000) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-size:]


def warm_up(browser, url: str) -> None:
    """Open the main page once, so the server learns the app's pages.

    Until a first session has run st.navigation, streamlit answers a direct link to another
    page with a "Page not found" notice over the right page (streamlit issue #9992). A shared
    link opened on a running app never sees it.
    """
    with browser_page(browser) as page:
        page.goto(url)
        page.locator("h1").first.wait_for(timeout=30_000)


@contextlib.contextmanager
def browser_page(browser, width: int = 1400, height: int = 900) -> Iterator:
    """A page of ``width`` x ``height`` px in a browser context of its own (a new session,
    as a link opened elsewhere), closed with its context when the block ends, even on a
    failed check."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        yield context.new_page()
    finally:
        context.close()
