"""docs/tutorials/first-dag.md, run as a reader runs it: its commands, then the page's form.

Every ``bash`` block of the page runs in order (``tests/tutorial_steps.py`` reads them),
in a scratch folder where ``.venv`` is this interpreter's environment and ``workers`` the
checkout's, so the commands run exactly as printed. Three things differ from a reader's
machine, each said here: the Redis URL the page exports is this run's leased database, the
review page's port is a free one, and the one block the page marks as skipped (the clone
and ``make demo``: ``tests/test_demo_run.py`` runs the demo) is checked to be that block.
The person's verdict is given as a person gives it: sign in on the page, open the item,
send the verdict form.
"""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.console_script import ROOT, clean_env, stop
from tests.tutorial_steps import Step, exported, steps
from workers.local.redis_server import free_port

pytestmark = [pytest.mark.integration]

PAGE_PORT = "8400"
PAGE_URL = "redis://127.0.0.1:6379/0"
#: Generous: a loaded two-core machine starts a fleet in well under this.
DEADLINE_S = 120.0


class Background:
    """A command left running, its output collected as it comes."""

    def __init__(self, code: str, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "-c", code],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = ""
        self.changed = threading.Condition()
        assert self.process.stdout is not None
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self.reader.start()

    def stop(self) -> None:
        """Stop it as Ctrl-C would (SIGTERM), then close its output once read to the end."""
        stop(self.process)
        self.reader.join(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self.changed:
                self.output += line
                self.changed.notify_all()

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + DEADLINE_S
        with self.changed:
            while text not in self.output:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    pytest.fail(f"never printed {text!r}:\n{self.output}")
                self.changed.wait(min(left, 1.0))


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A folder that looks like the checkout to the page's relative paths."""
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "workers").symlink_to(ROOT / "workers")
    return tmp_path


@pytest.fixture
def running() -> Iterator[list[Background]]:
    started: list[Background] = []
    yield started
    for background in reversed(started):
        background.stop()


def _run(code: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
    )
    assert done.returncode == 0, f"{code}\nexit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _until(code: str, text: str, cwd: Path, env: dict[str, str]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while text not in (out := _run(code, cwd, env)):
        if time.monotonic() > deadline:
            pytest.fail(f"{code} never printed {text!r}; last:\n{out}")
        time.sleep(0.5)


def _verdict_on_the_page(port: str, token: str, reviewer: str = "alice") -> None:
    """Sign in, open the waiting item from the queue, accept it: the page's own forms."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    base = f"http://127.0.0.1:{port}"

    def form(path: str, page: str, fields: dict[str, str], after: str = "") -> str:
        csrf = re.search(r'name="csrf" value="([^"]+)"', page[page.index(after) :])
        assert csrf is not None, page
        body = urllib.parse.urlencode({"csrf": csrf[1], **fields}).encode()
        with opener.open(base + path, body, timeout=30) as answer:
            return str(answer.read().decode())

    with opener.open(f"{base}/login", timeout=30) as answer:
        login = answer.read().decode()
    queue = form("/login", login, {"name": reviewer, "token": token})
    items = re.findall(r'href="(/review/[^"]+)"', queue)
    assert items == ["/review/tutorial-run-1%3Aannounce%3A1"], queue
    with opener.open(base + items[0], timeout=30) as answer:
        item = answer.read().decode()
    action = re.search(r'action="([^"]+)" class="verdict" id="verdict-form"', item)
    assert action is not None, item
    decided = form(action[1], item, {"action": "accept"}, after='id="verdict-form"')
    assert f"Decided by  {reviewer}" in " ".join(re.sub(r"<[^>]+>", " ", decided).split(" "))


def _substituted(step: Step, port: str) -> str:
    return step.code.replace(f"--port {PAGE_PORT}", f"--port {port}")


@pytest.mark.timeout(600)
def test_the_tutorial_runs_as_written(
    scratch: Path, running: list[Background], redis_url: str
) -> None:
    found = steps()
    skipped = [s for s in found if s.kind == "skip"]
    assert [s.code for s in skipped] == [
        "git clone <this repository> windags-evaluator && cd windags-evaluator\nmake demo"
    ]
    env, port = clean_env(), str(free_port())
    for step in found:
        if step.kind == "skip":
            continue
        if step.kind == "environment":
            values = exported(step.code)
            assert values.pop("WINDAGS_REDIS_URL") == PAGE_URL
            env = {**env, **values, "WINDAGS_REDIS_URL": redis_url}
        elif step.kind == "run":
            _run(step.code, scratch, env)
        elif step.kind == "until":
            _until(step.code, step.text, scratch, env)
        elif step.kind == "background until":
            running.append(Background(_substituted(step, port), scratch, env))
            running[-1].wait_for(step.text)
        elif step.kind == "the person's verdict on the page":
            _verdict_on_the_page(port, env["WINDAGS_REVIEW_UI_TOKEN"])
        else:
            pytest.fail(f"the page has a step this test does not know: {step}")
    assert {s.kind for s in found} >= {"run", "until", "background until", "environment"}
