"""``windags-eval demo`` end to end, as a newcomer runs it, and what it leaves behind.

It prints the exact commands that decide its waiting nodes, prefix filled in, and those
commands work; ``verdict`` and ``watch`` without the prefix say where the demo's data is;
every key it writes expires within the hour (but kombu's binding tables and beat's
schedule, which the README names); no folder is left in the temp directory; Ctrl-C or
SIGTERM right after the report says "interrupted", exits 130, and stops every worker.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests.console_script import ROOT, clean_env, run, script, stop
from workers.local.demo_keys import DEMO_TTL_S

PREFIX = "windags-demo"
#: Kept on purpose, as the README says: kombu's tables of its queues (a demo still running
#: would lose its routing if they expired) and celery beat's schedule.
LASTING = re.compile(rf"^{PREFIX}:(broker:_kombu\.binding.*|beat:schedule)$")
VERDICT = re.compile(
    rf"WINDAGS_KEY_PREFIX={PREFIX} windags-eval verdict (\S+) (\S+) (\d+) --accept"
)
#: Runs the console script with SIGINT at its default, whatever this run inherited (a run
#: started by nohup or a CI runner ignores it, and so would the demo): Ctrl-C as at a terminal.
WITH_CTRL_C = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def _demo_env(url: str, tmp: Path) -> dict[str, str]:
    return {"WINDAGS_REDIS_URL": url, "TMPDIR": str(tmp)}


def test_the_demo_prints_commands_that_work_and_leaves_nothing_lasting(
    cli_redis_url: str, tmp_path: Path
) -> None:
    done = run("demo", "--timeout-s", "120", timeout_s=300, **_demo_env(cli_redis_url, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(tmp_path.glob("windags-*")) == []
    found = VERDICT.search(done.stdout)
    assert found, done.stdout
    dag, node, attempt = found.groups()
    assert f"WINDAGS_KEY_PREFIX={PREFIX} WINDAGS_REVIEW_UI_TOKEN=" in done.stdout
    # Without the prefix both commands say where the demo's data is, in one line.
    watched = run("watch", dag, WINDAGS_REDIS_URL=cli_redis_url)
    assert watched.returncode == 1 and watched.stdout == "", watched.stdout + watched.stderr
    assert f"WINDAGS_KEY_PREFIX={PREFIX} windags-eval watch {dag}" in watched.stderr
    unprefixed = run("verdict", dag, node, attempt, "--accept", WINDAGS_REDIS_URL=cli_redis_url)
    assert unprefixed.returncode == 1, unprefixed.stderr
    assert f"WINDAGS_KEY_PREFIX={PREFIX}" in unprefixed.stderr
    assert len(unprefixed.stderr.strip().splitlines()) == 1
    # The printed command, as printed.
    decided = run(
        "verdict", dag, node, attempt, "--accept",
        WINDAGS_REDIS_URL=cli_redis_url, WINDAGS_KEY_PREFIX=PREFIX,
    )  # fmt: skip
    assert decided.returncode == 0, decided.stderr
    assert '"decision": "accept"' in decided.stdout
    client = redis.Redis.from_url(cli_redis_url)
    try:
        keys = [k.decode() for k in client.scan_iter(match=f"{PREFIX}:*", count=1000)]
        lifetimes = {key: client.ttl(key) for key in keys}
    finally:
        client.close()
    assert any(key.endswith(f":results:{dag}") for key in keys), keys
    forever = {k for k, ttl in lifetimes.items() if not 0 < ttl <= DEMO_TTL_S}
    assert {k for k in forever if not LASTING.match(k)} == set()


def _lines_until(process: subprocess.Popen[str], words: str, timeout_s: float) -> str:
    """What the process printed up to the line holding ``words``."""
    assert process.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(max(0.0, deadline - time.monotonic())):
                line = process.stdout.readline()
                if not line:
                    break
                seen.append(line)
                if words in line:
                    return "".join(seen)
    pytest.fail(f"the demo never printed {words!r}:\n{''.join(seen)}")


def _workers_of(launcher: int) -> list[int]:
    """Live processes that a launcher with this pid started (the fleet names it to them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"WINDAGS_LAUNCHER_PID={launcher}".encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


#: Runs of the demo an interrupt test may need before its signal lands mid-run.
LANDINGS = 3


def _interrupted_demo(
    url: str, tmp: Path, signum: int, after_s: float
) -> tuple[subprocess.Popen[str], str, str]:
    """The demo, sent ``signum`` ``after_s`` after its report: the process and its output."""
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_CTRL_C, script(), "demo", "--timeout-s", "120"],
        cwd=ROOT,
        env=clean_env(**_demo_env(url, tmp)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _lines_until(process, "review spend", timeout_s=240)
        time.sleep(after_s)
        process.send_signal(signum)
        out, err = process.communicate(timeout=120)
    finally:
        stop(process)
    return process, out, err


@pytest.mark.parametrize(
    ("signum", "after_s"),
    [(signal.SIGINT, 0.0), (signal.SIGINT, 0.3), (signal.SIGTERM, 0.0)],
    ids=["ctrl-c-at-the-report", "ctrl-c-just-after", "sigterm-at-the-report"],
)
def test_an_interrupt_right_after_the_report_says_so_and_leaves_nothing(
    cli_redis_url: str, tmp_path: Path, signum: int, after_s: float
) -> None:
    # On a loaded machine the demo may finish stopping its fleet before this side sends the
    # signal: that race lost is no finding about the demo, so it is run again, thrice at most.
    for _ in range(LANDINGS):
        process, out, err = _interrupted_demo(cli_redis_url, tmp_path, signum, after_s)
        if process.returncode != 0:
            break
    else:
        pytest.fail(f"the demo ended before the signal landed {LANDINGS} times:\n{err}")
    assert process.returncode == 130, out + err
    assert err.strip().splitlines()[-1] == "interrupted", err
    assert "Traceback" not in err
    assert list(tmp_path.glob("windags-*")) == []
    assert _workers_of(process.pid) == []
    assert os.path.exists(tmp_path)  # nothing removed that was not the demo's
