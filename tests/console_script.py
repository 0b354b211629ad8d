"""The installed ``windags-eval`` console script, run as a user runs it, and always reaped.

A command that overruns its time is asked to stop (SIGTERM: the CLI stops what it
started) and killed only if it will not; it never outlives the test that started it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "workers" / "samples"
NOTHING_LISTENS = "redis://127.0.0.1:1/0"
#: How long a process asked to stop (SIGTERM) gets before SIGKILL.
STOP_GRACE_S = 30.0


def script() -> str:
    """The console script installed beside this interpreter."""
    found = shutil.which("windags-eval", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("the windags-eval console script is not installed in this environment")
    return found


def clean_env(**env: str) -> dict[str, str]:
    """This environment without WINDAGS_* and ANTHROPIC_* settings, the built-in judge, ``env``."""
    base = {k: v for k, v in os.environ.items() if "WINDAGS" not in k and "ANTHROPIC" not in k}
    return {**base, "WINDAGS_JUDGE_BACKEND": "builtin", "COLUMNS": "200", **env}


def stop(process: subprocess.Popen[Any], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM, a bounded wait, then SIGKILL: whatever signals the process inherited."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def run(
    *args: str, stdin: str = "", timeout_s: float = 90.0, **env: str
) -> subprocess.CompletedProcess[str]:
    """``windags-eval args...`` with ``clean_env(**env)``; fails the test on overrun."""
    process = subprocess.Popen(
        [script(), *args],
        cwd=ROOT,
        env=clean_env(**env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop(process)
        out, err = process.communicate()
        pytest.fail(f"windags-eval {' '.join(args)} ran over {timeout_s:.0f} s:\n{out}\n{err}")
    finally:
        stop(process)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def leaf_commands() -> list[str]:
    """Every command ``windags-eval --help`` lists, groups expanded (``outcomes export``)."""
    found: list[str] = []
    for name in listed(run("--help").stdout):
        sub = run(name, "--help").stdout
        found += [f"{name} {leaf}" for leaf in listed(sub)] if "Commands" in sub else [name]
    return found


def listed(help_text: str) -> list[str]:
    """The command names under a help's "Commands" heading (plain or boxed help)."""
    after = help_text.split("Commands", 1)[1].splitlines()[1:] if "Commands" in help_text else []
    starts = [line[2:] for line in after if line.startswith(("  ", "│ "))]
    return [row.split()[0] for row in starts if row.strip() and not row[0].isspace()]
