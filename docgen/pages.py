"""Every generated reference page, and writing or checking them together."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from docgen import cli_page, keys_page, settings_page, telemetry_page, wire_pages

DOCS = Path(__file__).resolve().parents[1] / "docs"
COMMAND = "python -m docgen"


def render() -> dict[str, str]:
    """Each page's path under ``docs/`` and its text."""
    return {
        settings_page.PAGE: settings_page.render(),
        cli_page.PAGE: cli_page.render(),
        keys_page.PAGE: keys_page.render(),
        telemetry_page.PAGE: telemetry_page.render(),
        **wire_pages.render(),
    }


def stale(docs: Path = DOCS) -> list[str]:
    """Pages that differ from what the code renders, or that no generator writes any more."""
    pages = render()
    wrong = [
        name
        for name, text in pages.items()
        if not (docs / name).is_file() or (docs / name).read_text(encoding="utf-8") != text
    ]
    leftover = [
        str(path.relative_to(docs))
        for path in sorted((docs / wire_pages.FOLDER).glob("*.md"))
        if str(path.relative_to(docs)) not in pages
    ]
    return wrong + leftover


def write(docs: Path = DOCS) -> list[str]:
    """Write every page, remove pages of schemas that are gone; the paths written."""
    pages = render()
    for path in (docs / wire_pages.FOLDER).glob("*.md"):
        if str(path.relative_to(docs)) not in pages:
            path.unlink()
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    return list(pages)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the pages, or with ``--check`` name the stale ones and exit 1."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is stale")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for name in bad:
            print(f"docs/{name} is stale: run {COMMAND}", file=sys.stderr)
        return 1 if bad else 0
    for name in write():
        print(f"wrote docs/{name}")
    return 0
