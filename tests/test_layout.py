"""The tree keeps its shape: thin handlers, keys spelled once, settings read at boot.

Which room may import which is ``test_imports``; the largest modules: ``make sizes``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKERS = ROOT / "workers"
CLI = [sys.executable, "-c", "import sys; from workers.local.cli import main; sys.exit(main())"]
#: An f-string that puts a deployment prefix in front of a key family: ``{prefix}:...``.
PREFIXED_KEY = re.compile(r"\{[^{}]*prefix[^{}]*\}:")


#: Lines that spell a prefix on purpose: match patterns over a whole prefix, a key
#: the test's own consumer writes, and the one test of the layout the builder produces.
NOT_FLEET_KEYS = {
    ("tests/infrastructure.py", 'scan_iter(match=f"{prefix}:*")'),
    ("bench/soak_probe.py", 'scan_iter(match=f"{prefix}:*"'),
    ("tests/faults/test_subscriber_death.py", 'f"{prefix}:handled"'),
    ("tests/faults/test_state_cluster.py", 'f"{settings.key_prefix}:results:*"'),
    ("tests/test_ledger.py", '== f"{prefix}:cost:dag-1"'),
}


def test_every_redis_key_is_built_in_workers_keys() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("workers", "bench", "tests")
        for path in (ROOT / folder).rglob("*.py")
        if path not in (WORKERS / "keys.py", Path(__file__))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PREFIXED_KEY.search(line)
        and not any(
            str(path.relative_to(ROOT)) == where and spelled in line
            for where, spelled in NOT_FLEET_KEYS
        )
    ]
    assert offenders == []


def test_the_key_check_would_notice_a_key_spelled_elsewhere() -> None:
    assert PREFIXED_KEY.search('key = f"{self._prefix}:claim:{review_key}"')
    assert PREFIXED_KEY.search('f"{settings.key_prefix}:results:{dag}"')
    assert not PREFIXED_KEY.search('f"{dag}:{node}:{attempt}"')


def test_each_stage_handler_stays_a_thin_adapter() -> None:
    handlers = {
        p.relative_to(ROOT): len(p.read_text().splitlines())
        for p in (WORKERS / "fleet" / "handlers").glob("*.py")
    }
    assert len(handlers) >= 4
    assert {p: n for p, n in handlers.items() if n >= 120} == {}


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "WINDAGS" not in k and "ANTHROPIC" not in k}
    return {**env, **changes}


def test_importing_the_client_reads_no_settings() -> None:
    probe = (
        "from workers.client import ReviewClient\n"
        "from workers.fleet import worker, tasks\n"
        "from workers.settings import Settings\n"
        "print(Settings.from_environment({}, redis_url='redis://127.0.0.1:1/0').key_prefix)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=_env(WINDAGS_MAX_REQUEST_BYTES="abc"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "windags"


@pytest.mark.parametrize(
    "command",
    [
        ["review", "-"],
        ["demo"],
        ["fleet"],
        ["submit", "-"],
        ["watch", "some-dag"],
        ["review-ui"],
        ["verdict", "some-dag", "node", "1", "--accept"],
        ["outcomes", "export"],
    ],
)
@pytest.mark.parametrize(
    ("variable", "value"),
    [("WINDAGS_MAX_REQUEST_BYTES", "abc"), ("WINDAGS_REDIS_URL", "not-a-url")],
)
def test_a_bad_setting_is_one_line_naming_the_variable_and_exit_2(
    command: list[str], variable: str, value: str
) -> None:
    done = subprocess.run(
        [*CLI, *command],
        cwd=ROOT,
        env=_env(**{variable: value}),
        input="{}",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert variable in lines[0]


def test_a_worker_with_a_bad_setting_stops_at_boot_with_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "workers.fleet.worker", "worker", "-Q", "stage1"],
        cwd=ROOT,
        env=_env(WINDAGS_STAGE1_SOFT_LIMIT_S="999"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "soft limit" in done.stderr
    assert "Traceback" not in done.stderr


#: ``dag:node:attempt`` spelled by hand: the review's identity has one builder.
HAND_SPELLED_REVIEW_KEY = re.compile(r"\{[\w.]*dag_id\}:\{[\w.]*node_id\}:\{[\w.]*attempt\}")


def test_the_review_key_is_built_in_one_place() -> None:
    builder = ROOT / "schemas" / "request.py"
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("workers", "schemas", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if path != builder
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if HAND_SPELLED_REVIEW_KEY.search(line)
    ]
    assert offenders == []
    assert HAND_SPELLED_REVIEW_KEY.search(
        'key = f"{result.dag_id}:{result.node_id}:{result.attempt}"'
    )
