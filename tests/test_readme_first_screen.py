"""The README's first screen gets a newcomer from a fresh clone to a first review."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_prerequisites_and_how_the_venv_is_made_come_before_it_is_used() -> None:
    first_use = README.index(".venv/bin/windags-eval")
    before = README[:first_use]
    assert re.search(r"python3.{0,20}>= ?3\.11", before)
    assert "python3 -m venv .venv" in before
    assert "redis-server" in before and "optional" in before


def test_named_documents_are_explained_where_they_are_named() -> None:
    for name, explained in (
        ("BC-EVAL-002", "binding rules"),
        ("dag-quality.md", "quality-gate design"),
    ):
        for match in re.finditer(re.escape(name), README):
            around = README[max(0, match.start() - 300) : match.end() + 300]
            assert explained in around, f"{name} at {match.start()} is not explained"


def test_the_readme_is_short_and_gives_both_commands_on_its_first_screen() -> None:
    lines = README.splitlines()
    assert len(lines) <= 150
    first_screen = "\n".join(lines[:25])
    assert "make demo" in first_screen and "make test" in first_screen
