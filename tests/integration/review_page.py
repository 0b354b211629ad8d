"""The review page as a real process, and a real headless Chromium to drive it."""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.console_script import stop
from tests.infrastructure import unavailable

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Headless, and nothing fetched from the network by the browser itself.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,1000",
)
TOKEN = "reviewer-token-for-tests-0123456789"
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def review_page(env: dict[str, str], log: Path) -> Iterator[str]:
    """``windags-eval review-ui`` in its own process; yields its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "workers.local.cli", "review-ui", "--port", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **env, "WINDAGS_REVIEW_UI_TOKEN": TOKEN},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        yield base
    finally:
        stop(process)  # SIGTERM, a bounded wait, then SIGKILL


def chromium() -> Any:
    """A headless Chromium under selenium, with the system driver (nothing downloaded)."""
    if not (shutil.which(CHROMIUM) and Path(CHROMEDRIVER).exists()):
        unavailable("chromium and chromium-driver are not installed")
    os.environ["SE_OFFLINE"] = "true"  # selenium-manager must never fetch a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


class Reviewer:
    """A person at the page without a browser: cookies, forms, plain HTTP."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[int, str]:
        return self._send(urllib.request.Request(self.base + path))

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, str]:
        data = urllib.parse.urlencode(fields).encode()
        return self._send(urllib.request.Request(self.base + path, data=data, method="POST"))

    def sign_in(self, name: str, token: str = TOKEN) -> int:
        _, page = self.get("/login")
        status, _ = self.post("/login", {"csrf": csrf_of(page), "name": name, "token": token})
        return status

    def _send(self, request: urllib.request.Request) -> tuple[int, str]:
        try:
            with self.opener.open(request, timeout=20) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


def key_path(review_key: str) -> str:
    return "/review/" + urllib.parse.quote(review_key, safe="")
