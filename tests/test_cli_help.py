"""``--help`` as a newcomer reads it: flags that take no value show none, arguments in capitals.

Typer's rich help printed ``--accept <bool>`` and ``--help <bool>`` as if each took a
value, and ``{dag_id}`` on the usage line; a short sign-in token was refused with
pydantic's "Value should have at least 16 items after validation".
"""

from __future__ import annotations

import re

from tests.console_script import leaf_commands, run


def test_no_command_shows_a_value_for_a_flag_or_braces_on_its_usage_line() -> None:
    commands = leaf_commands()
    assert "verdict" in commands and "outcomes export" in commands, commands
    shown = {"": run("--help").stdout}
    shown.update({c: run(*c.split(), "--help").stdout for c in commands})
    assert {c: t for c, t in shown.items() if "<bool>" in t} == {}
    usage = {c: t.split("\n", 1)[0] for c, t in shown.items()}
    assert {c: line for c, line in usage.items() if not line.startswith("Usage: ")} == {}
    assert {c: line for c, line in usage.items() if "{" in line or "}" in line} == {}


def test_arguments_read_in_capitals_in_the_usage_the_help_and_the_errors() -> None:
    text = run("verdict", "--help").stdout
    assert text.splitlines()[0] == "Usage: windags-eval verdict [OPTIONS] DAG_ID NODE_ID ATTEMPT"
    assert re.search(r"^\s+--accept\s+Let the output go on\.", text, re.MULTILINE), text
    missing = run("verdict")
    assert missing.returncode == 2 and "Missing argument 'DAG_ID'" in missing.stderr


def test_a_short_sign_in_token_is_refused_in_characters_in_one_line() -> None:
    done = run("review-ui", "--port", "0", WINDAGS_REVIEW_UI_TOKEN="abcde")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "WINDAGS_REVIEW_UI_TOKEN" in lines[0] and "at least 16 characters" in lines[0]
    assert "items" not in lines[0]
