"""Every command that talks to Redis meets one that does not answer the same way.

One line on stderr naming the address, exit 1, nothing half-done on stdout: never a rich
traceback (``verdict`` and ``outcomes export`` printed ~200 lines ending in
``ConnectionError``), never a header and then an error (``watch``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.console_script import NOTHING_LISTENS, SAMPLES, leaf_commands, run

#: Each command of ``windags-eval --help`` that reads or writes Redis, as a user calls it.
#: ``{file}`` is a valid request file. The others do not use Redis on their own (``review``),
#: or start a private one, or serve regardless (their tests are elsewhere): listed as None.
INVOCATIONS: dict[str, list[str] | None] = {
    "verdict": ["verdict", "dag-1", "node-1", "1", "--accept"],
    "outcomes export": ["outcomes", "export"],
    "outcomes report": ["outcomes", "report", "dag-1", "node-1", "1", "0.5", "--reporter", "x"],
    "watch": ["watch", "dag-1"],
    "submit": ["submit", "{file}"],
    "calibration": ["calibration"],
    "dag register": ["dag", "register", "{shape}"],
    "dag show": ["dag", "show", "dag-1"],
    "fleet": ["fleet"],
    "demo": ["demo", "--timeout-s", "5"],
    "review": None,
    "review-ui": None,  # serves with Redis down: /healthz says so (test_review_ui_start.py)
}


@pytest.mark.timeout(600)
def test_a_redis_that_does_not_answer_is_one_line_and_exit_1_from_every_command(
    tmp_path: Path,
) -> None:
    request = tmp_path / "request.json"
    request.write_text((SAMPLES / "good_python.json").read_text())
    shape = SAMPLES / "dag" / "migration_dag.shape.json"
    commands = leaf_commands()
    assert {"verdict", "outcomes export", "watch", "submit"} <= set(commands), commands
    assert set(commands) <= set(INVOCATIONS), "add each new command to INVOCATIONS"
    wrong: dict[str, str] = {}
    for command in commands:
        args = INVOCATIONS[command]
        if args is None:
            continue
        argv = [a.format(file=request, shape=shape) for a in args]
        done = run(*argv, WINDAGS_REDIS_URL=NOTHING_LISTENS, TMPDIR=str(tmp_path))
        lines = done.stderr.strip().splitlines()
        if not (
            done.returncode == 1
            and len(lines) == 1
            and lines[0].startswith("error: ")
            and "127.0.0.1:1" in lines[0]
            and done.stdout.strip() == ""
        ):
            wrong[command] = f"exit {done.returncode}: {done.stdout[-300:]}{done.stderr[-600:]}"
    assert wrong == {}
