"""What an operator meets first, run as they run it: the installed console script.

A configured Redis that does not answer is an error (never a private stand-in); a bad
file names the file and list index; a request already reviewed says so; ``review`` and
``submit`` word the same refusal the same way; ``--help`` shows no reST markup.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from workers.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "workers" / "samples"
NOTHING_LISTENS = "redis://127.0.0.1:1/0"


def _script() -> str:
    found = shutil.which("windags-eval", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("the windags-eval console script is not installed in this environment")
    return found


def _run(*args: str, stdin: bytes = b"", **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if "WINDAGS" not in k and "ANTHROPIC" not in k}
    return subprocess.run(
        [_script(), *args],
        cwd=ROOT,
        env={**base, "WINDAGS_JUDGE_BACKEND": "builtin", "COLUMNS": "120", **env},
        input=stdin.decode("latin-1"),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _good(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((SAMPLES / "good_python.json").read_text())
    return {**body, **changes}


@pytest.fixture
def test_redis(cli_redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(cli_redis_url)
    yield client
    client.close()


def test_fleet_with_a_configured_redis_that_does_not_answer_fails_in_one_line() -> None:
    done = _run("fleet", WINDAGS_REDIS_URL=NOTHING_LISTENS)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and NOTHING_LISTENS in lines[0], done.stderr
    assert "fleet ready" not in done.stdout
    assert "private" not in done.stdout


def test_submit_names_the_file_and_list_index_of_a_bad_request(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_text(json.dumps(_good()))
    bad.write_text(json.dumps([_good(node_id="n1"), _good(node_id="n2", attempt=0)]))
    done = _run("submit", str(good), str(bad), WINDAGS_REDIS_URL=NOTHING_LISTENS)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"{bad}[1]" in lines[0] and "attempt" in lines[0]


def test_submit_of_an_empty_list_is_an_error_not_silence(tmp_path: Path) -> None:
    empty = tmp_path / "none.json"
    empty.write_text("[]")
    done = _run("submit", str(empty), WINDAGS_REDIS_URL=NOTHING_LISTENS)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == f"error: {empty}: an empty list (no request in it)"
    assert done.stdout == ""


def test_resubmitting_a_reviewed_request_says_so_instead_of_printing_its_key(
    tmp_path: Path, test_redis: redis.Redis, cli_redis_url: str
) -> None:
    request = _good(dag_id=f"resubmit-{os.getpid()}")
    review_key = f"{request['dag_id']}:{request['node_id']}:1"
    published = Settings(redis_url=cli_redis_url).keys.published(review_key)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(request))
    test_redis.set(published, "1-0", ex=60)  # what publish-once leaves behind
    try:
        done = _run("submit", str(path), WINDAGS_REDIS_URL=cli_redis_url)
    finally:
        test_redis.delete(published)
    assert done.returncode == 0, done.stderr
    assert review_key not in done.stdout
    assert "already reviewed" in done.stderr and review_key in done.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "empty"), (b"\xff\xfe{}", "not UTF-8"), (b'{"dag_id": ', "not JSON")],
)
def test_review_and_submit_word_the_same_refusal_the_same_way(
    tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(content)
    said = {}
    for command in ("review", "submit"):
        done = _run(command, str(path), WINDAGS_REDIS_URL=NOTHING_LISTENS)
        assert done.returncode == 2, done.stderr
        said[command] = done.stderr.strip()
    assert said["review"] == said["submit"], said
    assert str(path) in said["review"] and words in said["review"]


@pytest.mark.parametrize("command", [[], ["review"], ["submit"], ["fleet"], ["demo"], ["watch"]])
def test_help_shows_no_rest_markup(command: list[str]) -> None:
    done = _run(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert "``" not in done.stdout and ":class:" not in done.stdout
